// Random GDN problems for tests and benchmarks: the float64 reference inputs and the
// device-ready host buffers, describing exactly the same values (the doubles are the
// bf16/fp16-rounded q, k, v, do and the fp32-rounded g, beta, h0, dht).
#pragma once

#include <cstdint>
#include <vector>

#include "gdn/reference.hpp"
#include "gdn/testing/half.hpp"

namespace gdn::testing {

enum class Distribution {
  // docs/spec.md section 4: q, k l2-normalised; v, h0, do, dht standard normal;
  // beta = sigmoid(randn); g = -A_h softplus(0.5 randn + 1) with a per-value-head A_h in
  // [0, 16): head 0 gets A = 0 (no decay) and the last head A = 16 (strong decay) when
  // Hv >= 2; with Hv == 1 the one head is 0, 16 or uniform for seed % 3 = 0, 1, 2.
  Test,
  // docs/benchmarking.md (the anchor tables): q, k l2-normalised; v, h0 normal;
  // g = logsigmoid(randn) / 16, then g = 0 on Hv/4 value heads picked at random;
  // beta = sigmoid(randn).
  Bench,
};

struct CaseOptions {
  Distribution distribution = Distribution::Test;
  HalfType dtype = HalfType::BF16;  // of q, k, v, do
  bool with_h0 = true;              // false: empty h0 (zero initial state)
  bool with_dht = true;             // false: empty dht (no gradient through the final state)
  // false: leave inputs/grads empty (huge GPU-only cases whose reference is not computed).
  bool with_reference = true;

  // A forward-only case: no dht, h0 as asked.
  static CaseOptions forward(bool with_h0) {
    CaseOptions o;
    o.with_h0 = with_h0;
    o.with_dht = false;
    return o;
  }
};

// What a GPU test copies to the device; sizes as in gdn.h.
struct HostBuffers {
  std::vector<uint16_t> q, k, v, d_o;   // 16-bit patterns of CaseOptions::dtype
  std::vector<float> g, beta, h0, dht;  // h0 / dht empty when not requested
  std::vector<int64_t> cu_seqlens;      // a copy of shape.cu_seqlens (empty: none)
  std::vector<int32_t> cu_seqlens_i32() const;
};

struct RandomCase {
  ref::Shape shape;
  CaseOptions options;
  uint64_t seed = 0;
  std::vector<double> head_decay;  // A_h per value head (Test distribution; empty for Bench)
  std::vector<int> zero_gate_heads;  // heads with g = 0 (Bench distribution)
  ref::Inputs inputs;
  ref::Grads grads;
  HostBuffers host;
};

// Same (shape, seed, options) -> same case, bit for bit, on every machine. Throws
// std::invalid_argument (from ref::validate) for a shape that is not a GDN problem.
RandomCase make_random_case(const ref::Shape& shape, uint64_t seed, const CaseOptions& options = {});

}  // namespace gdn::testing
