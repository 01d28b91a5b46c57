// The rounding model of the CUDA chunked backward (reference_rounding.hpp). Each step below
// names the kernel and the product it follows; the formulas are those of the kernels' header
// comments (chain_inputs.cu, dstate_chain.cuh, local_grads.cuh), which chunked_backward.cpp
// derives. Padded rows (a chunk of L < 64 rows) contribute zeros in the kernels, so the model
// works on the L rows alone.
#include <algorithm>
#include <stdexcept>

#include "gdn/reference_chunk.hpp"
#include "gdn/reference_rounding.hpp"
#include "head_access.hpp"
#include "parallel.hpp"

namespace gdn::ref::rounding {

namespace {

using chunk::Mat;

const std::vector<std::string> kNames = {
    "T16", "S16", "recompute diag(beta)W'", "recompute V'", "P^T", "dVin", "E=diag(e)dO", "Xq",
    "dS'", "dV_new", "dW'=dv", "-diag(e)dW'", "W'", "T diag(beta)", "V_new", "dPm", "dT", "X",
    "Z", "dq,dk outputs", "scale diag(e)Q", "diag(f)V_new"};

// The roundings of one chunk: which points are on, which are split there.
struct Rounder {
  const Model& m;
  uint32_t split_here;
  double one(double x, uint32_t p) const {
    if (!(m.points & p)) return x;
    const double hi = m.round16(x);
    if (!(split_here & p)) return hi;
    return m.split.to_fp32 ? static_cast<double>(static_cast<float>(x)) : hi + m.round16(x - hi);
  }
  // hi + lo whatever the split masks say (the kernels' split products).
  double split(double x, uint32_t p) const {
    if (!(m.points & p)) return x;
    const double hi = m.round16(x);
    return hi + m.round16(x - hi);
  }
  Mat mat(Mat x, uint32_t p) const {
    for (double& v : x.a) v = one(v, p);
    return x;
  }
};

uint32_t split_mask(const SplitWhere& w, int64_t L, bool first, bool last) {
  uint32_t mask = 0;
  if (L < w.short_rows) mask |= w.short_chunks;
  if (L < w.short_rows && first) mask |= w.short_first_chunks;
  if (first) mask |= w.first_chunks;
  if (last) mask |= w.last_chunks;
  return mask;
}

double frobenius_dot(const Mat& x, const Mat& y) {
  double acc = 0;
  for (size_t i = 0; i < x.a.size(); ++i) acc += x.a[i] * y.a[i];
  return acc;
}

// What the reverse chain leaves for the local kernel of one chunk.
struct ChainOut {
  Mat dS;        // dS' unrounded (the fused kernel's fp32 registers)
  Mat dS16;      // dS' as the chain's operand and dstate16
  Mat dVn16;     // dvnew16
  Mat dVnSplit;  // dvnew16 + dvnew16_lo (hi + lo)
  Mat dv16;      // dW' = dv
  Mat edw16;     // -diag(e) dW', the K^T operand (and the fused kernel's G3 operand)
};

// Row sums minus column sums of a square matrix.
std::vector<double> rows_minus_columns(const Mat& x) {
  std::vector<double> out(static_cast<size_t>(x.rows), 0.0);
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t j = 0; j < x.cols; ++j) out[static_cast<size_t>(r)] += x(r, j) - x(j, r);
  return out;
}

}  // namespace

const std::vector<std::string>& point_names() { return kNames; }

std::string point_name(uint32_t point) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (point == (1u << i)) return kNames[i];
  throw std::invalid_argument("gdn::ref::rounding::point_name: point: expected one bit below 2^" +
                              std::to_string(kNames.size()) + ", got " + std::to_string(point));
}

BwdOutputs rounded_backward(const Shape& s, const Inputs& in, const Grads& gr, const Model& m,
                            const RunOptions& run) {
  validate(s, in, gr);
  if (!m.round16)
    throw std::invalid_argument("gdn::ref::rounding::rounded_backward: model.round16: expected a "
                                "rounding function, got none");
  BwdOutputs out = detail::zero_backward_outputs(s);
  const double scale = s.effective_scale();
  const int group = s.Hv / s.Hk;
  const auto at = [](const std::vector<double>& x, int64_t r) { return x[static_cast<size_t>(r)]; };

  detail::for_each_group(s, run, [&](int64_t n, int kh) {
    for (int h = kh * group; h < (kh + 1) * group; ++h) {
      std::vector<int64_t> starts;
      for (int64_t t0 = s.seq_begin(n); t0 < s.seq_end(n); t0 += chunk::kChunk) starts.push_back(t0);
      const size_t nc = starts.size();
      std::vector<chunk::ChunkIn> ins(nc);
      std::vector<chunk::ChunkPrep> preps(nc);
      std::vector<Mat> T16(nc), S16(nc);
      std::vector<uint32_t> splits(nc);
      const Mat h0 = detail::load_state(in.h0, s, n, h);
      const Mat dht = detail::load_state(gr.dht, s, n, h);

      // 1. Prepare (T16) and the forward recompute (chunk_loop_cw.cuh): S16 at every start.
      Mat S = h0;
      for (size_t c = 0; c < nc; ++c) {
        const int64_t L = std::min<int64_t>(chunk::kChunk, s.seq_end(n) - starts[c]);
        ins[c] = detail::gather_chunk(s, in, starts[c], L, h);
        preps[c] = chunk::prepare_chunk(ins[c]);
        splits[c] = split_mask(m.split, L, c == 0, c + 1 == nc);
        const Rounder R{m, splits[c]};
        const chunk::ChunkPrep& p = preps[c];
        Mat T(L, L);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j <= r; ++j) T(r, j) = p.Gam(r, j) * p.A0(r, j);
        T16[c] = R.mat(T, kT16);
        S16[c] = R.mat(S, kStates);
        const Mat U = chunk::matmul(ins[c].K, S16[c]);
        Mat wa(L, s.V);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < s.V; ++j)
            wa(r, j) = R.one(at(ins[c].beta, r) * (ins[c].V(r, j) - at(p.e, r) * U(r, j)), kRecomputeW);
        Mat vp = chunk::matmul(T16[c], wa);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < s.V; ++j) vp(r, j) = R.one(at(p.f, r) * vp(r, j), kRecomputeVp);
        for (double& x : S.a) x *= p.eL;
        chunk::add_scaled(S, chunk::matmul_tn(ins[c].K, vp), 1.0);
      }

      // 2. The reverse chain (chain_inputs.cu, dstate_chain.cuh).
      std::vector<ChainOut> ch(nc);
      std::vector<Mat> dOs(nc);
      Mat dS = dht;
      for (size_t c = nc; c-- > 0;) {
        const chunk::ChunkIn& ci = ins[c];
        const chunk::ChunkPrep& p = preps[c];
        const int64_t L = p.L;
        const Rounder R{m, splits[c]};
        dOs[c] = detail::gather_rows(gr.d_o, starts[c], L, s.Hv, h, s.V);
        const Mat& dO = dOs[c];
        // chain_inputs: P^T (gated, anti-causal), dVin = scale P^T dO, E, Xq = Q^T E. The fused
        // kernel: P^T with scale in it, dVin and Xq in fp32, Xq = (scale diag(e) Q)^T dO.
        Mat PT(L, L);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = i; j < L; ++j) {
            double dot = 0;
            for (int64_t x = 0; x < s.K; ++x) dot += ci.K(i, x) * ci.Q(j, x);
            PT(i, j) = R.one((m.fused ? scale : 1.0) * dot * p.Gam(j, i), kScoresT);
          }
        Mat dVin = chunk::matmul(PT, dO);
        Mat Xq;
        if (m.fused) {
          Mat Qe = ci.Q;
          for (int64_t r = 0; r < L; ++r)
            for (int64_t x = 0; x < s.K; ++x) Qe(r, x) = R.one(scale * at(p.e, r) * ci.Q(r, x), kQe);
          Xq = chunk::matmul_tn(Qe, dO);
        } else {
          for (double& x : dVin.a) x = R.one(scale * x, kDvin);
          Mat E = dO;
          for (int64_t r = 0; r < L; ++r)
            for (int64_t j = 0; j < s.V; ++j) E(r, j) = R.one(scale * at(p.e, r) * dO(r, j), kEdO);
          Xq = R.mat(chunk::matmul_tn(ci.Q, E), kXq);
        }
        // The chain step.
        ChainOut& o = ch[c];
        const bool exact_ds = m.exact_dht_last && c + 1 == nc && !gr.dht.empty();
        o.dS = dS;
        o.dS16 = exact_ds ? dS : R.mat(dS, kDstate);
        const Mat Y = chunk::matmul(ci.K, o.dS16);
        o.dVn16 = Mat(L, s.V);
        o.dVnSplit = Mat(L, s.V);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < s.V; ++j) {
            const double a = dVin(r, j) + at(p.f, r) * Y(r, j);
            o.dVn16(r, j) = R.one(a, kDvnew);
            o.dVnSplit(r, j) = R.split(a, kDvnew);
          }
        Mat Wd = chunk::matmul_tn(T16[c], o.dVn16);
        o.dv16 = Mat(L, s.V);
        Mat Eneg(L, s.V);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < s.V; ++j) {
            const double w = at(ci.beta, r) * Wd(r, j);
            o.dv16(r, j) = R.one(w, kDv);
            Eneg(r, j) = R.one(-at(p.e, r) * w, kEdw);
          }
        for (double& x : dS.a) x *= p.eL;
        chunk::add_scaled(dS, Xq, 1.0);
        chunk::add_scaled(dS, chunk::matmul_tn(ci.K, Eneg), 1.0);
        o.edw16 = Eneg;
        detail::scatter_rows(out.dv, starts[c], s.Hv, h, o.dv16);
      }
      detail::store_state(out.dh0, s, n, h, dS);

      // 3. The local gradients (local_grads.cu), per chunk.
      for (size_t c = 0; c < nc; ++c) {
        const chunk::ChunkIn& ci = ins[c];
        const chunk::ChunkPrep& p = preps[c];
        const int64_t L = p.L;
        const Rounder R{m, splits[c]};
        const bool first = c == 0, last = c + 1 == nc;
        const Mat& Sl = first && m.exact_h0_first ? h0 : S16[c];
        const Mat& dSp = ch[c].dS16;
        const Mat& dO = dOs[c];
        // A. W' = V - diag(e) K S; T diag(beta); V_new = (T diag(beta)) W'.
        const Mat KS = chunk::matmul(ci.K, Sl);
        Mat Wp(L, s.V), Wp16(L, s.V), WpSplit(L, s.V);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < s.V; ++j) {
            Wp(r, j) = ci.V(r, j) - at(p.e, r) * KS(r, j);
            Wp16(r, j) = R.one(Wp(r, j), kLocalW);
            WpSplit(r, j) = R.split(Wp(r, j), kLocalW);
          }
        Mat Tb(L, L);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < L; ++j) Tb(r, j) = R.one(T16[c](r, j) * at(ci.beta, j), kTbeta);
        const Mat Vn16 = R.mat(chunk::matmul(Tb, Wp16), kVnew);
        // G1 = dO S^T, G3 = dW' S^T, G2 = V_new dS'^T and their row sums; rs_ksw and rs_kds
        // hold the e and f terms: -e (K o G3) 1 and f (K o G2) 1. The fused kernel forms G3 from
        // -diag(e) dW' and G2 from diag(f) V_new, both rounded, and its terms as the rows of K o dk.
        const Mat G1 = chunk::matmul_nt(dO, Sl);
        Mat Fvn = Vn16;
        for (int64_t r = 0; r < L; ++r)
          for (int64_t j = 0; j < s.V; ++j) Fvn(r, j) = R.one(at(p.f, r) * Vn16(r, j), kFVnew);
        const Mat G3 = chunk::matmul_nt(m.fused ? ch[c].edw16 : ch[c].dv16, Sl);
        const Mat G2 = chunk::matmul_nt(m.fused ? Fvn : Vn16, dSp);
        std::vector<double> rs_qs(L), rs_ksw(L), rs_kds(L);
        Mat dq(L, s.K), dk(L, s.K);
        for (int64_t r = 0; r < L; ++r) {
          const double ge = m.fused ? 1.0 : -at(p.e, r), gf = m.fused ? 1.0 : at(p.f, r);
          rs_qs[static_cast<size_t>(r)] = row_dot(ci.Q, G1, r);
          rs_ksw[static_cast<size_t>(r)] = ge * row_dot(ci.K, G3, r);
          rs_kds[static_cast<size_t>(r)] = gf * row_dot(ci.K, G2, r);
          for (int64_t x = 0; x < s.K; ++x) {
            dq(r, x) = scale * at(p.e, r) * G1(r, x);
            dk(r, x) = ge * G3(r, x) + gf * G2(r, x);
          }
        }
        // <S, dS'>: the caller's fp32 h0 / dht at a sequence's ends when the kernels take them;
        // the fused kernel's dS' is fp32 throughout (dht itself in a sequence's last chunk).
        const bool s_exact = !m.fused && m.exact_sdot_at_ends && first && !in.h0.empty();
        const bool ds_exact = !m.fused && m.exact_sdot_at_ends && last && !gr.dht.empty();
        const double sdot = frobenius_dot(s_exact ? h0 : Sl, m.fused ? ch[c].dS : ds_exact ? dht : dSp);
        // dP = dO V_new^T, Q K^T, dAg = dV_new W'^T (split in short chunks).
        const Mat dp = chunk::matmul_nt(dO, Vn16);
        const Mat qk = chunk::matmul_nt(ci.Q, ci.K);
        const bool split_dag = !m.fused && m.split_dag_short && L < m.split.short_rows;
        const Mat dag = split_dag ? chunk::matmul_nt(ch[c].dVnSplit, WpSplit)
                                  : chunk::matmul_nt(ch[c].dVn16, Wp16);
        // B. dPm, dT, dbeta, X = T^T dT, dA = X T^T, Z.
        Mat dPm(L, L), m3(L, L), dT(L, L);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < L; ++j) {
            const double x = i >= j ? scale * dp(i, j) * p.Gam(i, j) : 0.0;
            m3(i, j) = x * qk(i, j);
            dPm(i, j) = R.one(x, kDpm);
            dT(i, j) = R.one(dag(i, j) * at(ci.beta, j), kDt);
          }
        std::vector<double> dgam = rows_minus_columns(m3);
        std::vector<double> dbeta(static_cast<size_t>(L), 0.0);
        for (int64_t r = 0; r < L; ++r)
          for (int64_t i = 0; i < L; ++i) dbeta[static_cast<size_t>(r)] += dag(i, r) * T16[c](i, r);
        chunk::add_scaled(dq, chunk::matmul(dPm, ci.K), 1.0);
        chunk::add_scaled(dk, chunk::matmul_tn(dPm, ci.Q), 1.0);
        const Mat X = R.mat(chunk::matmul_tn(T16[c], dT), kX);
        const Mat dA = chunk::matmul_nt(X, T16[c]);
        const Mat kk = chunk::matmul_nt(ci.K, ci.K);
        Mat Z(L, L), m2(L, L);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < i; ++j) {
            const double grad_a = -dA(i, j), gam = p.Gam(i, j), kkg = kk(i, j) * gam;
            dbeta[static_cast<size_t>(i)] += grad_a * kkg;
            Z(i, j) = R.one(grad_a * at(ci.beta, i) * gam, kZ);
            m2(i, j) = grad_a * at(ci.beta, i) * kkg;
          }
        chunk::add_scaled(dk, chunk::matmul(Z, ci.K), 1.0);
        chunk::add_scaled(dk, chunk::matmul_tn(Z, ci.K), 1.0);
        const std::vector<double> zg = rows_minus_columns(m2);
        // C. dgamma, then dg = reverse cumsum of dgamma plus the exclusive prefix of the f terms.
        for (int64_t r = 0; r < L; ++r)
          dgam[static_cast<size_t>(r)] += at(zg, r) + scale * at(p.e, r) * at(rs_qs, r) + at(rs_ksw, r);
        dgam[static_cast<size_t>(L - 1)] += p.eL * sdot;
        std::vector<double> dg(static_cast<size_t>(L));
        double suffix = 0, prefix = 0;
        for (int64_t r = L - 1; r >= 0; --r) dg[static_cast<size_t>(r)] = suffix += at(dgam, r);
        for (int64_t r = 0; r < L; ++r) {
          dg[static_cast<size_t>(r)] += prefix;
          prefix += at(rs_kds, r);
        }
        detail::scatter_scalars(out.dg, starts[c], s.Hv, h, dg);
        detail::scatter_scalars(out.dbeta, starts[c], s.Hv, h, dbeta);
        if (m.head_parts16 && group > 1)
          for (Mat* part : {&dq, &dk})
            for (double& x : part->a) x = m.round16(x);
        detail::scatter_add_rows(out.dq, starts[c], s.Hk, kh, dq);
        detail::scatter_add_rows(out.dk, starts[c], s.Hk, kh, dk);
      }
    }
  });
  if (m.points & kOutputs) {
    for (double& x : out.dq) x = m.round16(x);
    for (double& x : out.dk) x = m.round16(x);
  }
  return out;
}

}  // namespace gdn::ref::rounding
