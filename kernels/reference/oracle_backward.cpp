// The token-loop oracle, backward: reverse mode of the token step (docs/spec.md section 1).
//
// With P = S_{t-1}, alpha = exp(g_t), b = beta_t and S_t = alpha (I - b k k^T) P + b k v^T,
// o_t = scale S_t^T q_t, and dS the gradient with respect to S_t (from later tokens and dht):
//   dS += scale q_t do_t^T                dq_t = scale S_t do_t
//   dv_t    = b dS^T k
//   dbeta_t = k^T dS (v - alpha P^T k)
//   dg_t    = alpha <dS, P - b k k^T P>  = alpha (<dS, P> - b (dS^T k).(P^T k))
//   dk_t    = b dS v - alpha b (dS P^T k + P dS^T k)
//   dP      = alpha (I - b k k^T) dS     (becomes dS for token t-1)
// The states S_{t-1} are recomputed forwards from checkpoints every kSegment tokens, so
// memory stays O(T/kSegment * K * V) per head instead of O(T * K * V).
#include <algorithm>
#include <cmath>

#include "gdn/reference.hpp"
#include "head_access.hpp"
#include "oracle_step.hpp"
#include "parallel.hpp"

namespace gdn::ref {

namespace {

constexpr int64_t kSegment = 64;

struct TokenRefs {  // the flat-tensor offsets of token t for value head h
  size_t qk_row, v_row, gate;
};

TokenRefs token_refs(const Shape& s, int64_t t, int h) {
  const int kh = detail::k_head_of(s, h);
  return {static_cast<size_t>((t * s.Hk + kh) * s.K), static_cast<size_t>((t * s.Hv + h) * s.V),
          static_cast<size_t>(t * s.Hv + h)};
}

// Reverse mode of one token. P = S_{t-1}, St = S_t; dS enters as dL/dS_t (without the
// token's own output term) and leaves as dL/dS_{t-1}.
void token_backward(const Shape& s, const Inputs& in, const Grads& gr, BwdOutputs& out,
                    const TokenRefs& at, const chunk::Mat& P, const chunk::Mat& St,
                    chunk::Mat& dS, double scale) {
  const int K = s.K, V = s.V;
  const double* q = &in.q[at.qk_row];
  const double* k = &in.k[at.qk_row];
  const double* v = &in.v[at.v_row];
  const double* d_o = &gr.d_o[at.v_row];
  const double alpha = std::exp(in.g[at.gate]);
  const double b = in.beta[at.gate];

  for (int i = 0; i < K; ++i) {  // dS += scale q do^T;  dq = scale S_t do
    double dq = 0;
    for (int j = 0; j < V; ++j) {
      dS(i, j) += scale * q[i] * d_o[j];
      dq += St(i, j) * d_o[j];
    }
    out.dq[at.qk_row + i] += scale * dq;
  }

  std::vector<double> Pk(V, 0.0), dSk(V, 0.0);  // P^T k, dS^T k
  double dS_dot_P = 0;
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < V; ++j) {
      Pk[j] += P(i, j) * k[i];
      dSk[j] += dS(i, j) * k[i];
      dS_dot_P += dS(i, j) * P(i, j);
    }

  double dbeta = 0, dSk_dot_Pk = 0;
  for (int j = 0; j < V; ++j) {
    out.dv[at.v_row + j] = b * dSk[j];
    dbeta += dSk[j] * (v[j] - alpha * Pk[j]);
    dSk_dot_Pk += dSk[j] * Pk[j];
  }
  out.dbeta[at.gate] = dbeta;
  out.dg[at.gate] = alpha * (dS_dot_P - b * dSk_dot_Pk);

  for (int i = 0; i < K; ++i) {  // dk = b dS v - alpha b (dS P^T k + P dS^T k)
    double dS_v = 0, dS_Pk = 0, P_dSk = 0;
    for (int j = 0; j < V; ++j) {
      dS_v += dS(i, j) * v[j];
      dS_Pk += dS(i, j) * Pk[j];
      P_dSk += P(i, j) * dSk[j];
    }
    out.dk[at.qk_row + i] += b * dS_v - alpha * b * (dS_Pk + P_dSk);
  }

  for (int i = 0; i < K; ++i)  // dS_{t-1} = alpha (dS - b k (dS^T k)^T)
    for (int j = 0; j < V; ++j) dS(i, j) = alpha * (dS(i, j) - b * k[i] * dSk[j]);
}

void sequence_head_backward(const Shape& s, const Inputs& in, const Grads& gr,
                            BwdOutputs& out, int64_t n, int h, double scale) {
  const int64_t begin = s.seq_begin(n), end = s.seq_end(n);
  // Checkpoints: state before token begin + c * kSegment.
  std::vector<chunk::Mat> checkpoints;
  chunk::Mat S = detail::load_state(in.h0, s, n, h);
  for (int64_t t = begin; t < end; ++t) {
    if ((t - begin) % kSegment == 0) checkpoints.push_back(S);
    const TokenRefs at = token_refs(s, t, h);
    detail::oracle_step(S, &in.k[at.qk_row], &in.v[at.v_row], in.g[at.gate], in.beta[at.gate]);
  }

  chunk::Mat dS = detail::load_state(gr.dht, s, n, h);
  for (int64_t c = static_cast<int64_t>(checkpoints.size()) - 1; c >= 0; --c) {
    const int64_t seg_begin = begin + c * kSegment;
    const int64_t seg_end = std::min(end, seg_begin + kSegment);
    std::vector<chunk::Mat> states{checkpoints[static_cast<size_t>(c)]};  // states[i] = S before token seg_begin+i
    for (int64_t t = seg_begin; t < seg_end; ++t) {
      const TokenRefs at = token_refs(s, t, h);
      chunk::Mat next = states.back();
      detail::oracle_step(next, &in.k[at.qk_row], &in.v[at.v_row], in.g[at.gate], in.beta[at.gate]);
      states.push_back(std::move(next));
    }
    for (int64_t t = seg_end - 1; t >= seg_begin; --t) {
      const size_t i = static_cast<size_t>(t - seg_begin);
      token_backward(s, in, gr, out, token_refs(s, t, h), states[i], states[i + 1], dS, scale);
    }
  }
  detail::store_state(out.dh0, s, n, h, dS);
}

}  // namespace

BwdOutputs oracle_backward(const Shape& s, const Inputs& in, const Grads& gr,
                           const RunOptions& run) {
  validate(s, in, gr);
  BwdOutputs out = detail::zero_backward_outputs(s);
  const double scale = s.effective_scale();
  const int group = s.Hv / s.Hk;
  // One thread owns a k-head's value heads: their dq, dk sums land in rows nobody else writes.
  detail::for_each_group(s, run, [&](int64_t n, int kh) {
    for (int h = kh * group; h < (kh + 1) * group; ++h)
      sequence_head_backward(s, in, gr, out, n, h, scale);
  });
  return out;
}

}  // namespace gdn::ref
