// The oracle's single-token step (docs/spec.md section 1), shared by its forward and by the state
// recomputation of its backward so that both walk exactly the same arithmetic.
#pragma once

#include <cmath>
#include <vector>

#include "gdn/reference_chunk.hpp"

namespace gdn::ref::detail {

// y = S^T x (x: K values, y: V values), summing over i in increasing order. Rows of S are
// walked contiguously; the order of the sums is that of the plain definition.
inline void state_transpose_times(const chunk::Mat& S, const double* x, double* y) {
  for (int64_t j = 0; j < S.cols; ++j) y[j] = 0;
  for (int64_t i = 0; i < S.rows; ++i) {
    const double xi = x[i];
    const double* row = &S.a[static_cast<size_t>(i * S.cols)];
    for (int64_t j = 0; j < S.cols; ++j) y[j] += row[j] * xi;
  }
}

// S <- exp(g) (I - beta k k^T) S + beta k v^T, in the order a simple loop does it:
// S *= exp(g); u = beta (v - S^T k); S += k u^T.   k: K values, v: V values.
inline void oracle_step(chunk::Mat& S, const double* k, const double* v, double g, double beta) {
  const double alpha = std::exp(g);
  for (double& x : S.a) x *= alpha;
  std::vector<double> u(static_cast<size_t>(S.cols));
  state_transpose_times(S, k, u.data());  // S^T k
  for (int64_t j = 0; j < S.cols; ++j) u[j] = beta * (v[j] - u[j]);
  for (int64_t i = 0; i < S.rows; ++i) {
    double* row = &S.a[static_cast<size_t>(i * S.cols)];
    for (int64_t j = 0; j < S.cols; ++j) row[j] += k[i] * u[j];
  }
}

}  // namespace gdn::ref::detail
