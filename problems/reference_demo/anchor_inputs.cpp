#include "anchor_inputs.hpp"

#include <cmath>
#include <cstring>
#include <random>

namespace gdn::demo {

namespace {

// Round-to-nearest-even to bf16 and back: the kernels see bf16 inputs, so the reference does.
double round_to_bf16(double x) {
  float f = static_cast<float>(x);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Fills `count` vectors of length `dim` with randn, each scaled to unit l2 norm.
void unit_vectors(std::vector<double>& out, int64_t count, int dim, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  out.resize(static_cast<size_t>(count) * dim);
  for (int64_t i = 0; i < count; ++i) {
    double* row = out.data() + i * dim;
    double norm = 0;
    for (int d = 0; d < dim; ++d) norm += (row[d] = normal(rng)) * row[d];
    norm = std::sqrt(norm);
    for (int d = 0; d < dim; ++d) row[d] = round_to_bf16(row[d] / norm);
  }
}

}  // namespace

ref::Inputs anchor_inputs(const ref::Shape& s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::bernoulli_distribution no_decay(0.25);
  const int64_t tokens = s.B * s.T;
  ref::Inputs in;
  unit_vectors(in.q, tokens * s.Hk, s.K, rng);
  unit_vectors(in.k, tokens * s.Hk, s.K, rng);
  in.v.resize(static_cast<size_t>(tokens) * s.Hv * s.V);
  for (double& x : in.v) x = round_to_bf16(normal(rng));
  std::vector<bool> head_without_decay(s.Hv);
  for (int h = 0; h < s.Hv; ++h) head_without_decay[h] = no_decay(rng);
  in.g.resize(static_cast<size_t>(tokens) * s.Hv);
  in.beta.resize(in.g.size());
  for (int64_t t = 0; t < tokens; ++t)
    for (int h = 0; h < s.Hv; ++h) {
      const double x = normal(rng);
      // log(sigmoid(x)) without overflow on either side.
      const double log_sigmoid = x < 0 ? x - std::log1p(std::exp(x)) : -std::log1p(std::exp(-x));
      in.g[t * s.Hv + h] = head_without_decay[h] ? 0.0 : log_sigmoid / 16.0;
      in.beta[t * s.Hv + h] = 1.0 / (1.0 + std::exp(-normal(rng)));
    }
  in.h0.resize(static_cast<size_t>(s.num_seqs()) * s.Hv * s.K * s.V);
  for (double& x : in.h0) x = normal(rng);
  return in;
}

}  // namespace gdn::demo
