#include "gate_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "gdn/parallel_for.hpp"
#include "gdn/tuner/strategy.hpp"

namespace gdn::tuner {

std::uint16_t to_half_bits(float x, gdn_dtype dtype) {
  if (dtype == GDN_FP16) {
    _Float16 h = static_cast<_Float16>(x);
    std::uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  }
  if (dtype != GDN_BF16) throw std::invalid_argument("dtype: expected bf16 or fp16 for q, k, v");
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
  u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<std::uint16_t>(u >> 16);
}

float from_half_bits(std::uint16_t b, gdn_dtype dtype) {
  if (dtype == GDN_FP16) {
    _Float16 h;
    std::memcpy(&h, &b, 2);
    return static_cast<float>(h);
  }
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

namespace {

class Normal {
 public:
  explicit Normal(std::uint64_t seed) : rng_(seed) {}
  double uniform() { return (static_cast<double>(rng_.next() >> 11) + 0.5) * 0x1.0p-53; }
  double next() {  // Box-Muller
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform())), t = 2.0 * M_PI * uniform();
    spare_ = r * std::sin(t);
    has_spare_ = true;
    return r * std::cos(t);
  }

 private:
  SplitMix64 rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// The inputs of the largest anchor rows are ~4e8 normal draws: tens of seconds on one core,
// once per problem of a sweep. So values are drawn in fixed blocks, each from its own stream
// (seed, tensor, block), and the blocks run on every hardware thread: the same inputs whatever
// the number of threads.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t tensor, std::uint64_t block) {
  SplitMix64 mix(seed ^ (tensor * 0x9E3779B97F4A7C15ull) ^ ((block + 1) * 0xD1B54A32D192ED03ull));
  return mix.next();
}

template <class F>
void for_each_block(std::int64_t count, std::int64_t block, F f) {  // f(block index, begin, end)
  ref::parallel_for((count + block - 1) / block, 0, [&](std::int64_t b) {
    f(b, b * block, std::min(count, (b + 1) * block));
  });
}

enum Tensor : std::uint64_t { kQ = 1, kK, kV, kDecay, kGates, kH0 };

// l2-normalised rows of length dim, rounded to the dtype; doubles hold the rounded values.
void normalised_rows(std::uint64_t seed, Tensor tensor, std::int64_t rows, int dim, gdn_dtype dt,
                     std::vector<std::uint16_t>& bits, std::vector<double>* ref) {
  bits.resize(static_cast<std::size_t>(rows) * dim);
  if (ref) ref->resize(bits.size());
  for_each_block(rows, 4096, [&](std::int64_t b, std::int64_t begin, std::int64_t end) {
    Normal n(stream_seed(seed, tensor, static_cast<std::uint64_t>(b)));
    std::vector<double> row(dim);
    for (std::int64_t r = begin; r < end; ++r) {
      double norm = 0;
      for (auto& x : row) {
        x = n.next();
        norm += x * x;
      }
      norm = std::sqrt(norm);
      for (int i = 0; i < dim; ++i) {
        const auto at = static_cast<std::size_t>(r) * dim + i;
        bits[at] = to_half_bits(static_cast<float>(row[i] / norm), dt);
        if (ref) (*ref)[at] = from_half_bits(bits[at], dt);
      }
    }
  });
}

constexpr std::int64_t kValueBlock = std::int64_t{1} << 20;

}  // namespace

GateInputs make_gate_inputs(std::int64_t rows, int Hk, int Hv, int K, int V, std::int64_t n_seqs,
                            gdn_dtype dt, std::uint64_t seed, bool with_ref) {
  GateInputs in;
  auto* R = with_ref ? &in.reference : nullptr;
  normalised_rows(seed, kQ, rows * Hk, K, dt, in.q, R ? &R->q : nullptr);
  normalised_rows(seed, kK, rows * Hk, K, dt, in.k, R ? &R->k : nullptr);
  in.v.resize(static_cast<std::size_t>(rows) * Hv * V);
  if (R) R->v.resize(in.v.size());
  for_each_block(static_cast<std::int64_t>(in.v.size()), kValueBlock, [&](std::int64_t b, std::int64_t begin, std::int64_t end) {
    Normal n(stream_seed(seed, kV, static_cast<std::uint64_t>(b)));
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      in.v[i] = to_half_bits(static_cast<float>(n.next()), dt);
      if (R) R->v[i] = from_half_bits(in.v[i], dt);
    }
  });
  std::vector<double> decay(Hv);
  Normal decay_draw(stream_seed(seed, kDecay, 0));
  for (int h = 0; h < Hv; ++h) decay[h] = 16.0 * decay_draw.uniform();
  decay[0] = 0;
  if (Hv > 1) decay[Hv - 1] = 16;
  const auto gates = static_cast<std::size_t>(rows) * Hv;
  in.g.resize(gates);
  in.beta.resize(gates);
  for_each_block(static_cast<std::int64_t>(gates), kValueBlock, [&](std::int64_t b, std::int64_t begin, std::int64_t end) {
    Normal n(stream_seed(seed, kGates, static_cast<std::uint64_t>(b)));
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      const double x = 0.5 * n.next() + 1.0;
      const double softplus = x > 20 ? x : std::log1p(std::exp(x));
      in.g[i] = static_cast<float>(-decay[i % Hv] * softplus);
      in.beta[i] = static_cast<float>(1.0 / (1.0 + std::exp(-n.next())));
    }
  });
  in.h0.resize(static_cast<std::size_t>(n_seqs) * Hv * K * V);
  for_each_block(static_cast<std::int64_t>(in.h0.size()), kValueBlock, [&](std::int64_t b, std::int64_t begin, std::int64_t end) {
    Normal n(stream_seed(seed, kH0, static_cast<std::uint64_t>(b)));
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) in.h0[i] = static_cast<float>(n.next());
  });
  if (R) {
    R->g.assign(in.g.begin(), in.g.end());
    R->beta.assign(in.beta.begin(), in.beta.end());
    R->h0.assign(in.h0.begin(), in.h0.end());
  }
  return in;
}

}  // namespace gdn::tuner
