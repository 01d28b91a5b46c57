// The rounding model's schemes (the kernels' roundings and candidate repairs) and the GPU
// backward test's way of drawing and judging an edge-set case, shared by the model's tests and
// gdn-backward-rounding-study.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "gdn/reference_rounding.hpp"
#include "gdn/testing/half.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn::testing {

// A named scheme for inputs of `type`: "float64" (no rounding), "kernels" (the CUDA backward's
// roundings), and the repairs scheme_list() names. Throws std::invalid_argument for an unknown
// name.
ref::rounding::Model scheme(const std::string& name, HalfType type);
std::string scheme_list();

// Edge-set case `index` of test seed `seed`, as Backward.EdgeSetMatchesOracle draws it.
RandomCase edge_case_draw(const ShapeCase& shape, size_t index, uint64_t seed);

inline constexpr std::array<const char*, 6> kBackwardOutputs = {"dq", "dk", "dv", "dh0", "dg", "dbeta"};

// Relative RMS errors against the oracle, in kBackwardOutputs' order, and the bars.
struct BackwardErrors {
  std::array<double, 6> rel{};
  bool fails(size_t i) const;  // rel[i] over its bar (or NaN)
  bool any_fails() const;
};
BackwardErrors backward_errors(const RandomCase& c, const ref::rounding::Model& m,
                               const ref::BwdOutputs& oracle, const ref::RunOptions& run = {});

// Failures over draws: how many draws missed a bar, per output, and the worst error and its seed.
struct FailureTally {
  int draws = 0, failed = 0;
  std::array<int, 6> fails{};
  std::array<double, 6> worst{};
  std::array<uint64_t, 6> worst_seed{};
  void add(const BackwardErrors& e, uint64_t seed);
  std::string describe() const;  // "3/500 fail; dq 1/500 worst 1.2e-02 (seed 77), ..."
};

}  // namespace gdn::testing
