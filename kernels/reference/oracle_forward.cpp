// The token-loop oracle, forward: the definition every other implementation is checked against.
#include "gdn/reference.hpp"
#include "head_access.hpp"
#include "oracle_step.hpp"
#include "parallel.hpp"

namespace gdn::ref {

FwdOutputs oracle_forward(const Shape& s, const Inputs& in, const RunOptions& run) {
  validate(s, in);
  const double scale = s.effective_scale();
  FwdOutputs out;
  out.o.assign(static_cast<size_t>(s.B * s.T * s.Hv * s.V), 0.0);
  if (s.want_final_state) out.ht.assign(static_cast<size_t>(state_elements(s)), 0.0);

  const int group = s.Hv / s.Hk;
  detail::for_each_group(s, run, [&](int64_t n, int kh) {
    std::vector<double> o(static_cast<size_t>(s.V));
    for (int h = kh * group; h < (kh + 1) * group; ++h) {
      chunk::Mat S = detail::load_state(in.h0, s, n, h);  // K x V
      for (int64_t t = s.seq_begin(n); t < s.seq_end(n); ++t) {
        const size_t qk_row = static_cast<size_t>((t * s.Hk + kh) * s.K);
        const size_t v_row = static_cast<size_t>((t * s.Hv + h) * s.V);
        const size_t gate = static_cast<size_t>(t * s.Hv + h);
        detail::oracle_step(S, &in.k[qk_row], &in.v[v_row], in.g[gate], in.beta[gate]);
        detail::state_transpose_times(S, &in.q[qk_row], o.data());  // o_t = scale S_t^T q_t
        for (int j = 0; j < s.V; ++j) out.o[v_row + j] = scale * o[static_cast<size_t>(j)];
      }
      if (s.want_final_state) detail::store_state(out.ht, s, n, h, S);
    }
  });
  return out;
}

}  // namespace gdn::ref
