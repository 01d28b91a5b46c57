#include "gdn/testing/random_case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gdn/testing/random.hpp"

namespace gdn::testing {

namespace {

// Streams of derive_seed: one per tensor, so that options never shift other tensors' values.
enum Stream : uint64_t { kQ = 1, kK, kV, kG, kBeta, kH0, kDo, kDht, kHeads };

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }
double log_sigmoid(double x) { return -softplus(-x); }

// [tokens * heads * dim] rows of l2-normalised (or plain) normals, rounded to the half type.
std::vector<uint16_t> half_rows(uint64_t seed, int64_t rows, int dim, bool l2_normalise,
                                HalfType type) {
  Rng rng(seed);
  std::vector<uint16_t> out(static_cast<size_t>(rows * dim));
  std::vector<double> row(static_cast<size_t>(dim));
  for (int64_t r = 0; r < rows; ++r) {
    double norm2 = 0;
    for (double& x : row) {
      x = rng.normal();
      norm2 += x * x;
    }
    const double inv = l2_normalise && norm2 > 0 ? 1.0 / std::sqrt(norm2) : 1.0;
    for (int i = 0; i < dim; ++i)
      out[static_cast<size_t>(r * dim + i)] = float_to_half(static_cast<float>(row[i] * inv), type);
  }
  return out;
}

std::vector<float> normal_floats(uint64_t seed, int64_t count) {
  Rng rng(seed);
  std::vector<float> out(static_cast<size_t>(count));
  for (float& x : out) x = static_cast<float>(rng.normal());
  return out;
}

// Per-head decay scale A_h of the Test distribution.
std::vector<double> test_head_decay(uint64_t case_seed, int Hv) {
  Rng rng(derive_seed(case_seed, kHeads));
  std::vector<double> A(static_cast<size_t>(Hv));
  for (double& a : A) a = rng.uniform(0.0, 16.0);
  if (Hv >= 2) {
    A.front() = 0.0;
    A.back() = 16.0;
  } else {
    const double choices[3] = {0.0, 16.0, A[0]};
    A[0] = choices[case_seed % 3];
  }
  return A;
}

void fill_gates(RandomCase& c) {
  const ref::Shape& s = c.shape;
  const int64_t tokens = s.B * s.T;
  Rng rng(derive_seed(c.seed, kG));
  c.host.g.resize(static_cast<size_t>(tokens * s.Hv));
  if (c.options.distribution == Distribution::Test) {
    c.head_decay = test_head_decay(c.seed, s.Hv);
    for (int64_t t = 0; t < tokens; ++t)
      for (int h = 0; h < s.Hv; ++h)
        c.host.g[static_cast<size_t>(t * s.Hv + h)] =
            static_cast<float>(-c.head_decay[static_cast<size_t>(h)] * softplus(0.5 * rng.normal() + 1.0));
  } else {
    std::vector<int> heads(static_cast<size_t>(s.Hv));
    std::iota(heads.begin(), heads.end(), 0);
    Rng pick(derive_seed(c.seed, kHeads));
    for (size_t i = heads.size(); i > 1; --i) std::swap(heads[i - 1], heads[pick.below(i)]);
    c.zero_gate_heads.assign(heads.begin(), heads.begin() + s.Hv / 4);
    std::sort(c.zero_gate_heads.begin(), c.zero_gate_heads.end());
    for (int64_t t = 0; t < tokens; ++t)
      for (int h = 0; h < s.Hv; ++h) {
        const double g = log_sigmoid(rng.normal()) / 16.0;
        const bool zeroed = std::binary_search(c.zero_gate_heads.begin(), c.zero_gate_heads.end(), h);
        c.host.g[static_cast<size_t>(t * s.Hv + h)] = zeroed ? 0.0f : static_cast<float>(g);
      }
  }
  Rng beta_rng(derive_seed(c.seed, kBeta));
  c.host.beta.resize(c.host.g.size());
  for (float& b : c.host.beta) b = static_cast<float>(sigmoid(beta_rng.normal()));
}

}  // namespace

std::vector<int32_t> HostBuffers::cu_seqlens_i32() const {
  return {cu_seqlens.begin(), cu_seqlens.end()};
}

RandomCase make_random_case(const ref::Shape& shape, uint64_t seed, const CaseOptions& options) {
  ref::validate(shape);
  const int64_t tokens = shape.B * shape.T;
  RandomCase c;
  c.shape = shape;
  c.options = options;
  c.seed = seed;
  const HalfType dtype = options.dtype;
  HostBuffers& host = c.host;
  host.cu_seqlens = shape.cu_seqlens;
  host.q = half_rows(derive_seed(seed, kQ), tokens * shape.Hk, shape.K, true, dtype);
  host.k = half_rows(derive_seed(seed, kK), tokens * shape.Hk, shape.K, true, dtype);
  host.v = half_rows(derive_seed(seed, kV), tokens * shape.Hv, shape.V, false, dtype);
  host.d_o = half_rows(derive_seed(seed, kDo), tokens * shape.Hv, shape.V, false, dtype);
  fill_gates(c);
  if (options.with_h0) host.h0 = normal_floats(derive_seed(seed, kH0), ref::state_elements(shape));
  if (options.with_dht) host.dht = normal_floats(derive_seed(seed, kDht), ref::state_elements(shape));

  if (options.with_reference) {
    c.inputs = {to_double(host.q, dtype), to_double(host.k, dtype), to_double(host.v, dtype),
                to_double(host.g), to_double(host.beta), to_double(host.h0)};
    c.grads = {to_double(host.d_o, dtype), to_double(host.dht)};
  }
  return c;
}

}  // namespace gdn::testing
