// The oracle's single-token step (gdn.md section 1), shared by its forward and by the state
// recomputation of its backward so that both walk exactly the same arithmetic.
#pragma once

#include <cmath>

#include "gdn/reference_chunk.hpp"

namespace gdn::ref::detail {

// S <- exp(g) (I - beta k k^T) S + beta k v^T, in the order a simple loop does it:
// S *= exp(g); u = beta (v - S^T k); S += k u^T.   k: K values, v: V values.
inline void oracle_step(chunk::Mat& S, const double* k, const double* v, double g, double beta) {
  const double alpha = std::exp(g);
  for (double& x : S.a) x *= alpha;
  for (int64_t j = 0; j < S.cols; ++j) {
    double kS = 0;  // (S^T k)_j
    for (int64_t i = 0; i < S.rows; ++i) kS += S(i, j) * k[i];
    const double u = beta * (v[j] - kS);
    for (int64_t i = 0; i < S.rows; ++i) S(i, j) += k[i] * u;
  }
}

}  // namespace gdn::ref::detail
