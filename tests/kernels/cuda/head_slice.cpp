#include "head_slice.hpp"

#include "gdn/testing/half.hpp"

namespace gdn::testing::gpu {

HeadSlice whole_group(const ref::Shape& s, int k_head) {
  const int group = s.Hv / s.Hk;
  return {k_head, k_head * group, group};
}

HeadSlice single_head(const ref::Shape& s, int v_head) {
  return {v_head / (s.Hv / s.Hk), v_head, 1};
}

ref::Shape slice_shape(const ref::Shape& s, const HeadSlice& h) {
  ref::Shape sub = s;
  sub.Hk = 1;
  sub.Hv = h.v_count;
  sub.scale = s.effective_scale();
  return sub;
}

ref::Inputs slice_inputs(const RandomCase& c, const HeadSlice& h) {
  const ref::Shape& s = c.shape;
  const int64_t tokens = s.B * s.T, seqs = s.num_seqs();
  const HalfType t = c.options.dtype;
  ref::Inputs in;
  in.q = to_double(slice_heads(c.host.q, tokens, s.Hk, s.K, h.k_head, 1), t);
  in.k = to_double(slice_heads(c.host.k, tokens, s.Hk, s.K, h.k_head, 1), t);
  in.v = to_double(slice_heads(c.host.v, tokens, s.Hv, s.V, h.v_begin, h.v_count), t);
  in.g = to_double(slice_heads(c.host.g, tokens, s.Hv, 1, h.v_begin, h.v_count));
  in.beta = to_double(slice_heads(c.host.beta, tokens, s.Hv, 1, h.v_begin, h.v_count));
  if (!c.host.h0.empty())
    in.h0 = to_double(slice_heads(c.host.h0, seqs, s.Hv, int64_t(s.K) * s.V, h.v_begin, h.v_count));
  return in;
}

ref::Grads slice_grads(const RandomCase& c, const HeadSlice& h) {
  const ref::Shape& s = c.shape;
  const int64_t tokens = s.B * s.T, seqs = s.num_seqs();
  ref::Grads gr;
  gr.d_o = to_double(slice_heads(c.host.d_o, tokens, s.Hv, s.V, h.v_begin, h.v_count), c.options.dtype);
  if (!c.host.dht.empty())
    gr.dht = to_double(slice_heads(c.host.dht, seqs, s.Hv, int64_t(s.K) * s.V, h.v_begin, h.v_count));
  return gr;
}

}  // namespace gdn::testing::gpu
