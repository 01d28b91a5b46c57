// The chunked form (chunk 64, gate-free blocked inverse) against the token-loop oracle,
// forward and backward, over the shared edge set and inputs drawn fresh from the "test"
// distribution of docs/spec.md section 4 (including a head without decay and one whose decay
// underflows exp to 0). Both are float64; they differ only in the order of operations,
// so they must agree to ~1e-10 relative (measured: ~1e-15, see the printed figures).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "gdn/reference.hpp"
#include "gdn/testing/compare.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn {
namespace {

using testing::ShapeCase;

constexpr double kAgreement = 1e-10;

// CPU-sized head dims for the edge set: the semantics do not depend on K, V, and K = 16 < 64
// makes the chunk's keys linearly dependent, the hardest case for the inverse.
constexpr int kSmallK = 16, kSmallV = 32;

struct Agreement {
  std::vector<std::pair<std::string, double>> errors;
  void add(const std::string& name, const std::vector<double>& chunked,
           const std::vector<double>& oracle) {
    // An empty output (no final state asked, no tokens) must be empty on both sides.
    ASSERT_EQ(chunked.size(), oracle.size()) << name;
    ASSERT_EQ(testing::count_nan(chunked), 0) << name;
    ASSERT_EQ(testing::count_nan(oracle), 0) << name;
    errors.emplace_back(name, ref::rel_rms(chunked, oracle));
  }
  std::string line() const {
    std::string s;
    char buf[64];
    for (const auto& [name, e] : errors) {
      std::snprintf(buf, sizeof buf, " %s %.1e", name.c_str(), e);
      s += buf;
    }
    return s;
  }
};

void expect_agreement(const testing::RandomCase& c, const std::string& label, double bar) {
  SCOPED_TRACE(testing::seed_note(c.seed) + " " + testing::describe(c.shape));
  Agreement a;
  const ref::FwdOutputs of = ref::oracle_forward(c.shape, c.inputs);
  const ref::FwdOutputs cf = ref::chunked_forward(c.shape, c.inputs);
  a.add("o", cf.o, of.o);
  a.add("ht", cf.ht, of.ht);
  const ref::BwdOutputs ob = ref::oracle_backward(c.shape, c.inputs, c.grads);
  const ref::BwdOutputs cb = ref::chunked_backward(c.shape, c.inputs, c.grads);
  a.add("dq", cb.dq, ob.dq);
  a.add("dk", cb.dk, ob.dk);
  a.add("dv", cb.dv, ob.dv);
  a.add("dbeta", cb.dbeta, ob.dbeta);
  a.add("dg", cb.dg, ob.dg);
  a.add("dh0", cb.dh0, ob.dh0);
  std::printf("[chunked-vs-oracle] %-28s%s\n", label.c_str(), a.line().c_str());
  for (const auto& [name, e] : a.errors) EXPECT_LE(e, bar) << name;
}

testing::RandomCase make_case(const ShapeCase& sc, uint64_t seed,
                              testing::Distribution d = testing::Distribution::Test,
                              testing::HalfType t = testing::HalfType::BF16) {
  testing::CaseOptions options;
  options.distribution = d;
  options.dtype = t;
  options.with_h0 = sc.with_h0;
  options.with_dht = sc.with_dht;
  return testing::make_random_case(sc.shape, seed, options);
}

class RefChunkedVsOracle : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(RefChunkedVsOracle, TestDistribution) {
  expect_agreement(make_case(GetParam(), testing::test_seed()), GetParam().name, kAgreement);
}

INSTANTIATE_TEST_SUITE_P(EdgeSet, RefChunkedVsOracle,
                         ::testing::ValuesIn(testing::edge_cases(kSmallK, kSmallV)),
                         [](const auto& info) { return info.param.name; });

TEST(RefChunkedVsOracleMore, BenchDistribution) {
  const ShapeCase sc{"bench_ragged", testing::packed_shape({47, 81, 200}, 2, 8, kSmallK, kSmallV)};
  expect_agreement(make_case(sc, testing::test_seed(), testing::Distribution::Bench), sc.name,
                   kAgreement);
}

TEST(RefChunkedVsOracleMore, Fp16Inputs) {
  const ShapeCase sc{"fp16_T130", testing::dense_shape(1, 130, 1, 2, kSmallK, kSmallV)};
  expect_agreement(make_case(sc, testing::test_seed(), testing::Distribution::Test,
                             testing::HalfType::FP16),
                   sc.name, kAgreement);
}

// The production head dims once (K = V = 128), with a partial last chunk and a 1-token sequence.
TEST(RefChunkedVsOracleMore, HeadDims128) {
  ShapeCase sc{"K128_V128_lengths_1_130", testing::packed_shape({1, 130}, 1, 2, 128, 128)};
  sc.shape.layout = ref::StateLayout::VK;
  expect_agreement(make_case(sc, testing::test_seed()), sc.name, kAgreement);
}

// Keys of norm 1.4 instead of 1: N's entries reach beta |k|^2 ~ 2, a harder inverse, while
// I - beta k k^T (eigenvalue 1 - 1.96 beta in (-0.96, 1)) still keeps the state bounded.
TEST(RefChunkedVsOracleMore, LongerKeys) {
  ShapeCase sc{"keys_norm_1.4", testing::packed_shape({64, 100}, 1, 2, 8, 8)};
  testing::RandomCase c = make_case(sc, testing::test_seed());
  for (double& x : c.inputs.k) x *= 1.4;
  expect_agreement(c, sc.name, kAgreement);
}

}  // namespace
}  // namespace gdn
