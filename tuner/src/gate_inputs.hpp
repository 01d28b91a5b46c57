// Internal: seeded inputs of one problem for the GPU worker, as the device buffers (16-bit
// patterns, fp32) and, for the correctness gate, the float64 reference inputs of exactly the
// same values. Distribution of docs/spec.md section 4: q, k l2-normalised; v, h0 normal;
// beta = sigmoid(randn); g = -A_h softplus(0.5 randn + 1), A_h in [0, 16) per value head with
// head 0 at A = 0 (no decay) and the last at A = 16 (strong decay).
#pragma once

#include <cstdint>
#include <vector>

#include "gdn/gdn.h"
#include "gdn/reference.hpp"

namespace gdn::tuner {

struct GateInputs {
  std::vector<std::uint16_t> q, k, v;  // qkv dtype bit patterns
  std::vector<float> g, beta, h0;
  ref::Inputs reference;               // same values in float64 (empty unless asked)
};

// rows = B * T tokens; Hk, Hv, K, V heads/dims; n_seqs initial states.
GateInputs make_gate_inputs(std::int64_t rows, int Hk, int Hv, int K, int V, std::int64_t n_seqs,
                            gdn_dtype dtype, std::uint64_t seed, bool with_reference);

std::uint16_t to_half_bits(float x, gdn_dtype dtype);
float from_half_bits(std::uint16_t bits, gdn_dtype dtype);

}  // namespace gdn::tuner
