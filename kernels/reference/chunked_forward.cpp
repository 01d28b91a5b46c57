// The chunked forward (docs/spec.md section 2): per chunk of C = 64 rows, with S the chunk's start
// state (K x V) and the names of reference_chunk.hpp,
//   W'     = V - diag(e) K S                         (e_r = exp(gamma_r))
//   V_new  = Ag W'                                   (Ag = (Gam o A0) diag(beta))
//   O      = scale [diag(e) Q S + ((Q K^T) o Gam) V_new]     (Gam is zero above the diagonal)
//   S_next = eL S + K^T diag(f) V_new                (eL = exp(gamma_{L-1}), f_r = exp(gamma_{L-1} - gamma_r))
// Every exponent is <= 0 when g <= 0, so nothing overflows; strong decay underflows to 0.
#include <algorithm>
#include <cmath>

#include "gdn/reference.hpp"
#include "gdn/reference_chunk.hpp"
#include "head_access.hpp"
#include "parallel.hpp"

namespace gdn::ref {

namespace chunk {

ChunkPrep prepare_chunk(const ChunkIn& in) {
  ChunkPrep p;
  p.L = in.K.rows;
  const size_t L = static_cast<size_t>(p.L);
  p.gamma.resize(L);
  double running = 0;
  for (size_t r = 0; r < L; ++r) p.gamma[r] = running += in.g[r];
  const double gamma_last = L ? p.gamma[L - 1] : 0.0;
  p.e.resize(L);
  p.f.resize(L);
  for (size_t r = 0; r < L; ++r) {
    p.e[r] = std::exp(p.gamma[r]);
    p.f[r] = std::exp(gamma_last - p.gamma[r]);
  }
  p.eL = std::exp(gamma_last);
  p.Gam = Mat(p.L, p.L);
  for (int64_t r = 0; r < p.L; ++r)
    for (int64_t s = 0; s <= r; ++s)
      p.Gam(r, s) = std::exp(p.gamma[static_cast<size_t>(r)] - p.gamma[static_cast<size_t>(s)]);
  p.N = strict_lower_beta_kkt(in.K, in.beta);
  p.A0 = invert_unit_lower_blocked(p.N);
  p.Ag = Mat(p.L, p.L);
  for (int64_t r = 0; r < p.L; ++r)
    for (int64_t s = 0; s <= r; ++s)
      p.Ag(r, s) = p.Gam(r, s) * p.A0(r, s) * in.beta[static_cast<size_t>(s)];
  return p;
}

ChunkFwd chunk_forward(const ChunkIn& in, const Mat& S, double scale) {
  const ChunkPrep p = prepare_chunk(in);
  const Mat KS = matmul(in.K, S);  // L x V
  Mat Wp = in.V;                   // W' = V - diag(e) K S
  for (int64_t r = 0; r < p.L; ++r)
    for (int64_t j = 0; j < Wp.cols; ++j) Wp(r, j) -= p.e[static_cast<size_t>(r)] * KS(r, j);
  const Mat Vnew = matmul(p.Ag, Wp);

  Mat Pm = matmul_nt(in.Q, in.K);  // (Q K^T) o Gam: causal, diagonal included
  for (size_t i = 0; i < Pm.a.size(); ++i) Pm.a[i] *= p.Gam.a[i];
  const Mat QS = matmul(in.Q, S);
  ChunkFwd out;
  out.O = matmul(Pm, Vnew);
  for (int64_t r = 0; r < p.L; ++r)
    for (int64_t j = 0; j < out.O.cols; ++j)
      out.O(r, j) = scale * (p.e[static_cast<size_t>(r)] * QS(r, j) + out.O(r, j));

  Mat fVnew = Vnew;  // diag(f) V_new
  for (int64_t r = 0; r < p.L; ++r)
    for (int64_t j = 0; j < fVnew.cols; ++j) fVnew(r, j) *= p.f[static_cast<size_t>(r)];
  out.S_next = matmul_tn(in.K, fVnew);
  add_scaled(out.S_next, S, p.eL);
  return out;
}

}  // namespace chunk

FwdOutputs chunked_forward(const Shape& s, const Inputs& in, const RunOptions& run) {
  validate(s, in);
  const double scale = s.effective_scale();
  FwdOutputs out;
  out.o.assign(static_cast<size_t>(s.B * s.T * s.Hv * s.V), 0.0);
  if (s.want_final_state) out.ht.assign(static_cast<size_t>(state_elements(s)), 0.0);
  const int group = s.Hv / s.Hk;
  detail::for_each_group(s, run, [&](int64_t n, int kh) {
    for (int h = kh * group; h < (kh + 1) * group; ++h) {
      chunk::Mat S = detail::load_state(in.h0, s, n, h);
      for (int64_t t0 = s.seq_begin(n); t0 < s.seq_end(n); t0 += chunk::kChunk) {
        const int64_t L = std::min<int64_t>(chunk::kChunk, s.seq_end(n) - t0);
        chunk::ChunkFwd c = chunk::chunk_forward(detail::gather_chunk(s, in, t0, L, h), S, scale);
        detail::scatter_rows(out.o, t0, s.Hv, h, c.O);
        S = std::move(c.S_next);
      }
      if (s.want_final_state) detail::store_state(out.ht, s, n, h, S);
    }
  });
  return out;
}

}  // namespace gdn::ref
