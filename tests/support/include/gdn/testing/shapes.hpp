// The shape lists every correctness test walks (docs/spec.md section 4), shared by the CPU
// reference tests and the GPU kernel tests. Head dims are parameters: the GPU kernels need
// K = V = 128; CPU tests of the reference itself may use smaller ones to stay fast.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gdn/reference.hpp"

namespace gdn::testing {

struct ShapeCase {
  std::string name;
  ref::Shape shape;
  bool with_h0 = true;   // pass an initial state
  bool with_dht = true;  // pass a gradient of the final state (backward)
};

// GoogleTest prints parameters with this (name and shape instead of raw bytes).
void PrintTo(const ShapeCase& c, std::ostream* os);

// Edge set: T = 1, 63, 64, 65, 1000; B > 1 without cu_seqlens; ragged varlen
// [0,410,841,1135,2126,2512,4096] and [0,47,128]; lengths 0/1/64 (zero-length sequences
// first, inside and last); a problem with no tokens at all; Hv/Hk in {1,2,3,4,6,8}; h0
// absent/present, final state on/off, dht absent/present and both state layouts, each
// appearing at least once. About 11k tokens x heads in all.
std::vector<ShapeCase> edge_cases(int K, int V);

// A sample of the anchor tables' layouts (one long sequence, equal splits, ragged splits)
// and head configurations, at 8k tokens each. GPU sized: the float64 reference costs
// ~4 K V flops per token per value head for the forward alone.
std::vector<ShapeCase> anchor_sample_cases(int K, int V);

// One T = 32768 single sequence (passed through cu_seqlens) per anchor head configuration.
std::vector<ShapeCase> long_cases(int K, int V);

// The (Hk, Hv) pairs of the anchor tables (TP1..TP8 of the Qwen3.5/3.6 family and others).
std::vector<std::pair<int, int>> anchor_head_configs();

// Builders.
ref::Shape dense_shape(int64_t B, int64_t T, int Hk, int Hv, int K, int V);
ref::Shape packed_shape(const std::vector<int64_t>& lengths, int Hk, int Hv, int K, int V);

// "B=1 T=128 N=2 [0,47,128] Hk=2 Hv=4 K=16 V=32 KV final" - for test names and messages.
std::string describe(const ref::Shape& s);

}  // namespace gdn::testing
