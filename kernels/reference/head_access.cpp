#include "head_access.hpp"

namespace gdn::ref::detail {

namespace {
size_t row_offset(int64_t token, int heads, int head, int dim) {
  return static_cast<size_t>((token * heads + head) * static_cast<int64_t>(dim));
}
}  // namespace

Mat gather_rows(const std::vector<double>& x, int64_t t0, int64_t L, int heads, int head,
                int dim) {
  Mat m(L, dim);
  for (int64_t r = 0; r < L; ++r) {
    const double* src = x.data() + row_offset(t0 + r, heads, head, dim);
    for (int c = 0; c < dim; ++c) m(r, c) = src[c];
  }
  return m;
}

void scatter_rows(std::vector<double>& x, int64_t t0, int heads, int head, const Mat& m) {
  const int dim = static_cast<int>(m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    double* dst = x.data() + row_offset(t0 + r, heads, head, dim);
    for (int c = 0; c < dim; ++c) dst[c] = m(r, c);
  }
}

void scatter_add_rows(std::vector<double>& x, int64_t t0, int heads, int head, const Mat& m) {
  const int dim = static_cast<int>(m.cols);
  for (int64_t r = 0; r < m.rows; ++r) {
    double* dst = x.data() + row_offset(t0 + r, heads, head, dim);
    for (int c = 0; c < dim; ++c) dst[c] += m(r, c);
  }
}

std::vector<double> gather_scalars(const std::vector<double>& x, int64_t t0, int64_t L,
                                   int heads, int head) {
  std::vector<double> v(static_cast<size_t>(L));
  for (int64_t r = 0; r < L; ++r) v[static_cast<size_t>(r)] = x[row_offset(t0 + r, heads, head, 1)];
  return v;
}

void scatter_scalars(std::vector<double>& x, int64_t t0, int heads, int head,
                     const std::vector<double>& values) {
  for (size_t r = 0; r < values.size(); ++r)
    x[row_offset(t0 + static_cast<int64_t>(r), heads, head, 1)] = values[r];
}

Mat load_state(const std::vector<double>& states, const Shape& s, int64_t n, int h) {
  Mat S(s.K, s.V);
  if (states.empty()) return S;
  const double* base = states.data() + static_cast<size_t>((n * s.Hv + h) * s.K * s.V);
  for (int i = 0; i < s.K; ++i)
    for (int j = 0; j < s.V; ++j)
      S(i, j) = s.layout == StateLayout::KV ? base[i * s.V + j] : base[j * s.K + i];
  return S;
}

void store_state(std::vector<double>& states, const Shape& s, int64_t n, int h, const Mat& S) {
  double* base = states.data() + static_cast<size_t>((n * s.Hv + h) * s.K * s.V);
  for (int i = 0; i < s.K; ++i)
    for (int j = 0; j < s.V; ++j)
      (s.layout == StateLayout::KV ? base[i * s.V + j] : base[j * s.K + i]) = S(i, j);
}

chunk::ChunkIn gather_chunk(const Shape& s, const Inputs& in, int64_t t0, int64_t L, int h) {
  const int kh = k_head_of(s, h);
  return {gather_rows(in.q, t0, L, s.Hk, kh, s.K), gather_rows(in.k, t0, L, s.Hk, kh, s.K),
          gather_rows(in.v, t0, L, s.Hv, h, s.V), gather_scalars(in.g, t0, L, s.Hv, h),
          gather_scalars(in.beta, t0, L, s.Hv, h)};
}

BwdOutputs zero_backward_outputs(const Shape& s) {
  const int64_t tokens = s.B * s.T;
  BwdOutputs out;
  out.dq.assign(static_cast<size_t>(tokens * s.Hk * s.K), 0.0);
  out.dk.assign(out.dq.size(), 0.0);
  out.dv.assign(static_cast<size_t>(tokens * s.Hv * s.V), 0.0);
  out.dg.assign(static_cast<size_t>(tokens * s.Hv), 0.0);
  out.dbeta.assign(out.dg.size(), 0.0);
  out.dh0.assign(static_cast<size_t>(state_elements(s)), 0.0);
  return out;
}

}  // namespace gdn::ref::detail
