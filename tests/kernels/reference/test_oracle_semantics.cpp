// The oracle's semantics on cases whose answer is known by hand or by an equivalent
// problem: one token, no-write and decay-only recurrences, packed varlen = separate runs,
// B > 1 = packed equal lengths, the VK layout = the transpose, GVA = duplicated k-heads,
// zero-length sequences pass the state (and its gradient) through.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "gdn/reference.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn {
namespace {

constexpr double kExact = 1e-14;

// Both implementations, for the properties they must share.
using Forward = std::function<ref::FwdOutputs(const ref::Shape&, const ref::Inputs&)>;
using Backward =
    std::function<ref::BwdOutputs(const ref::Shape&, const ref::Inputs&, const ref::Grads&)>;
const Forward kForwards[] = {
    [](const ref::Shape& s, const ref::Inputs& in) { return ref::oracle_forward(s, in); },
    [](const ref::Shape& s, const ref::Inputs& in) { return ref::chunked_forward(s, in); }};
const Backward kBackwards[] = {
    [](const ref::Shape& s, const ref::Inputs& in, const ref::Grads& g) {
      return ref::oracle_backward(s, in, g);
    },
    [](const ref::Shape& s, const ref::Inputs& in, const ref::Grads& g) {
      return ref::chunked_backward(s, in, g);
    }};

testing::RandomCase random_case(const ref::Shape& s, bool h0 = true, bool dht = true) {
  testing::CaseOptions o;
  o.with_h0 = h0;
  o.with_dht = dht;
  return testing::make_random_case(s, testing::test_seed(), o);
}

// Rows [t0, t0 + L) of a [tokens, heads, dim] tensor.
std::vector<double> rows(const std::vector<double>& x, int64_t t0, int64_t L, int64_t row_size) {
  return {x.begin() + t0 * row_size, x.begin() + (t0 + L) * row_size};
}

TEST(RefOracleSemantics, OneTokenFromZeroState) {
  testing::RandomCase c = random_case(testing::dense_shape(1, 1, 1, 1, 4, 3), false);
  const auto& in = c.inputs;
  const ref::FwdOutputs f = ref::oracle_forward(c.shape, in);
  const double scale = 0.5;  // K^-0.5 with K = 4
  double qk = 0;
  for (int i = 0; i < 4; ++i) qk += in.q[i] * in.k[i];
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(f.o[j], scale * in.beta[0] * qk * in.v[j], kExact);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(f.ht[i * 3 + j], in.beta[0] * in.k[i] * in.v[j], kExact);
}

TEST(RefOracleSemantics, NoWriteKeepsTheStateAndDecayScalesIt) {
  testing::RandomCase c = random_case(testing::dense_shape(1, 5, 1, 1, 3, 2));
  std::fill(c.inputs.beta.begin(), c.inputs.beta.end(), 0.0);
  std::fill(c.inputs.g.begin(), c.inputs.g.end(), -0.25);
  c.shape.scale = 2.0;
  const ref::FwdOutputs f = ref::oracle_forward(c.shape, c.inputs);
  for (size_t i = 0; i < f.ht.size(); ++i) EXPECT_NEAR(f.ht[i], std::exp(-1.25) * c.inputs.h0[i], kExact);
  for (int t = 0; t < 5; ++t)  // o_t = scale exp(-0.25 (t+1)) h0^T q_t
    for (int j = 0; j < 2; ++j) {
      double expect = 0;
      for (int i = 0; i < 3; ++i) expect += c.inputs.h0[i * 2 + j] * c.inputs.q[t * 3 + i];
      EXPECT_NEAR(f.o[t * 2 + j], 2.0 * std::exp(-0.25 * (t + 1)) * expect, kExact);
    }
}

TEST(RefOracleSemantics, PackedSequencesEqualSeparateRunsAndZeroLengthPassesThrough) {
  const std::vector<int64_t> lengths{3, 0, 70, 1};
  const int Hk = 1, Hv = 2, K = 4, V = 3;
  const testing::RandomCase c = random_case(testing::packed_shape(lengths, Hk, Hv, K, V));
  const ref::FwdOutputs f = ref::oracle_forward(c.shape, c.inputs);
  const ref::BwdOutputs b = ref::oracle_backward(c.shape, c.inputs, c.grads);
  const int64_t state = Hv * K * V;
  int64_t t0 = 0;
  for (size_t n = 0; n < lengths.size(); ++n) {
    const int64_t L = lengths[n];
    const ref::Shape one = testing::dense_shape(1, L, Hk, Hv, K, V);
    const ref::Inputs in{rows(c.inputs.q, t0, L, Hk * K), rows(c.inputs.k, t0, L, Hk * K),
                         rows(c.inputs.v, t0, L, Hv * V), rows(c.inputs.g, t0, L, Hv),
                         rows(c.inputs.beta, t0, L, Hv), rows(c.inputs.h0, n, 1, state)};
    const ref::Grads gr{rows(c.grads.d_o, t0, L, Hv * V), rows(c.grads.dht, n, 1, state)};
    const ref::FwdOutputs fn = ref::oracle_forward(one, in);
    const ref::BwdOutputs bn = ref::oracle_backward(one, in, gr);
    EXPECT_EQ(fn.o, rows(f.o, t0, L, Hv * V));
    EXPECT_EQ(fn.ht, rows(f.ht, n, 1, state));
    EXPECT_EQ(bn.dq, rows(b.dq, t0, L, Hk * K));
    EXPECT_EQ(bn.dg, rows(b.dg, t0, L, Hv));
    EXPECT_EQ(bn.dh0, rows(b.dh0, n, 1, state));
    if (L == 0) {
      EXPECT_EQ(fn.ht, in.h0);
      EXPECT_EQ(bn.dh0, gr.dht);
    }
    t0 += L;
  }
}

TEST(RefOracleSemantics, BatchEqualsPackedEqualLengths) {
  const testing::RandomCase dense = random_case(testing::dense_shape(3, 65, 2, 4, 4, 3));
  ref::Shape packed = testing::packed_shape({65, 65, 65}, 2, 4, 4, 3);
  for (const Forward& run : kForwards) {
    const ref::FwdOutputs a = run(dense.shape, dense.inputs);
    const ref::FwdOutputs b = run(packed, dense.inputs);
    EXPECT_EQ(a.o, b.o);
    EXPECT_EQ(a.ht, b.ht);
  }
  const ref::BwdOutputs a = ref::oracle_backward(dense.shape, dense.inputs, dense.grads);
  const ref::BwdOutputs b = ref::oracle_backward(packed, dense.inputs, dense.grads);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dh0, b.dh0);
}

// VK layout: h0, dht given transposed give ht, dh0 transposed and identical token outputs.
TEST(RefOracleSemantics, StateLayoutVkIsTheTranspose) {
  const int K = 4, V = 3, Hv = 2;
  const testing::RandomCase c = random_case(testing::packed_shape({5, 0, 66}, 1, Hv, K, V));
  const auto transpose_states = [&](const std::vector<double>& x, bool kv_to_vk) {
    std::vector<double> y(x.size());
    for (size_t base = 0; base < x.size(); base += K * V)
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) {
          const size_t kv = base + i * V + j, vk = base + j * K + i;
          (kv_to_vk ? y[vk] : y[kv]) = kv_to_vk ? x[kv] : x[vk];
        }
    return y;
  };
  ref::Shape vk = c.shape;
  vk.layout = ref::StateLayout::VK;
  ref::Inputs in_vk = c.inputs;
  in_vk.h0 = transpose_states(c.inputs.h0, true);
  ref::Grads gr_vk = c.grads;
  gr_vk.dht = transpose_states(c.grads.dht, true);
  for (const Forward& run : kForwards) {
    const ref::FwdOutputs a = run(c.shape, c.inputs), b = run(vk, in_vk);
    EXPECT_EQ(a.o, b.o);
    EXPECT_EQ(a.ht, transpose_states(b.ht, false));
  }
  for (const Backward& run : kBackwards) {
    const ref::BwdOutputs a = run(c.shape, c.inputs, c.grads), b = run(vk, in_vk, gr_vk);
    EXPECT_EQ(a.dv, b.dv);
    EXPECT_EQ(a.dg, b.dg);
    EXPECT_EQ(a.dh0, transpose_states(b.dh0, false));
  }
}

// GVA: Hk = 1 serving Hv = 2 equals Hk = 2 with the k-head duplicated, and dq, dk of the shared
// head are the sums over the two value heads.
TEST(RefOracleSemantics, GvaEqualsDuplicatedKeyHeads) {
  const int K = 4, V = 3, T = 70;
  const testing::RandomCase c = random_case(testing::dense_shape(1, T, 1, 2, K, V));
  ref::Shape dup = c.shape;
  dup.Hk = 2;
  ref::Inputs in = c.inputs;
  in.q.clear();
  in.k.clear();
  for (int t = 0; t < T; ++t)
    for (int copy = 0; copy < 2; ++copy)
      for (int i = 0; i < K; ++i) {
        in.q.push_back(c.inputs.q[t * K + i]);
        in.k.push_back(c.inputs.k[t * K + i]);
      }
  EXPECT_EQ(ref::oracle_forward(c.shape, c.inputs).o, ref::oracle_forward(dup, in).o);
  for (const Backward& run : kBackwards) {
    const ref::BwdOutputs shared = run(c.shape, c.inputs, c.grads);
    const ref::BwdOutputs split = run(dup, in, c.grads);
    EXPECT_EQ(shared.dv, split.dv);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < K; ++i) {
        EXPECT_NEAR(shared.dq[t * K + i], split.dq[(t * 2) * K + i] + split.dq[(t * 2 + 1) * K + i], kExact);
        EXPECT_NEAR(shared.dk[t * K + i], split.dk[(t * 2) * K + i] + split.dk[(t * 2 + 1) * K + i], kExact);
      }
  }
}

TEST(RefOracleSemantics, OptionalTensors) {
  const testing::RandomCase c = random_case(testing::packed_shape({10, 0}, 1, 1, 4, 3), false, false);
  ref::Shape s = c.shape;
  s.want_final_state = false;
  EXPECT_TRUE(ref::oracle_forward(s, c.inputs).ht.empty());
  EXPECT_TRUE(ref::chunked_forward(s, c.inputs).ht.empty());
  ref::Inputs zeros = c.inputs;  // an empty h0 means zeros
  zeros.h0.assign(static_cast<size_t>(ref::state_elements(s)), 0.0);
  EXPECT_EQ(ref::oracle_forward(c.shape, c.inputs).ht, ref::oracle_forward(c.shape, zeros).ht);
  const ref::BwdOutputs b = ref::oracle_backward(c.shape, c.inputs, c.grads);
  EXPECT_EQ(b.dh0.size(), static_cast<size_t>(ref::state_elements(s)));  // always produced
  for (size_t i = 4 * 3; i < b.dh0.size(); ++i) EXPECT_EQ(b.dh0[i], 0.0);  // empty seq, no dht
}

}  // namespace
}  // namespace gdn
