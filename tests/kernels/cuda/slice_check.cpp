#include "slice_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>

namespace gdn::testing::gpu {
namespace {

std::string slice_tag(const HeadSlice& h) {
  return "[h" + std::to_string(h.v_begin) + ".." + std::to_string(h.v_begin + h.v_count) + ")";
}

}  // namespace

std::vector<SlicedReference> forward_references(const RandomCase& c,
                                                const std::vector<HeadSlice>& slices) {
  std::vector<std::future<SlicedReference>> jobs;
  for (const HeadSlice& h : slices)
    jobs.push_back(std::async(std::launch::async, [&c, h] {
      SlicedReference r{h, slice_shape(c.shape, h), {}, {}};
      r.fwd = ref::oracle_forward(r.shape, slice_inputs(c, h));
      return r;
    }));
  std::vector<SlicedReference> out;
  for (auto& j : jobs) out.push_back(j.get());
  return out;
}

std::vector<SlicedReference> backward_references(const RandomCase& c,
                                                 const std::vector<HeadSlice>& slices) {
  std::vector<std::future<SlicedReference>> jobs;
  for (const HeadSlice& h : slices)
    jobs.push_back(std::async(std::launch::async, [&c, h] {
      SlicedReference r{h, slice_shape(c.shape, h), {}, {}};
      r.bwd = ref::oracle_backward(r.shape, slice_inputs(c, h), slice_grads(c, h));
      return r;
    }));
  std::vector<SlicedReference> out;
  for (auto& j : jobs) out.push_back(j.get());
  return out;
}

CheckReport check_forward_slice(const RandomCase& c, const SlicedReference& r,
                                const DeviceFwdResult& got) {
  const ref::Shape& s = c.shape;
  const HeadSlice& h = r.slice;
  const int64_t tokens = s.B * s.T;
  const Tolerances tol;
  const std::string tag = slice_tag(h);
  CheckReport rep;
  rep.outputs.push_back(check_output("o" + tag, slice_heads(got.o, tokens, s.Hv, s.V, h.v_begin, h.v_count),
                                     c.options.dtype, r.fwd.o, tol.o));
  if (s.want_final_state)
    rep.outputs.push_back(check_output(
        "ht" + tag, slice_heads(got.ht, s.num_seqs(), s.Hv, int64_t(s.K) * s.V, h.v_begin, h.v_count),
        r.fwd.ht, tol.ht));
  return rep;
}

CheckReport check_backward_slice(const RandomCase& c, const SlicedReference& r,
                                 const DeviceBwdResult& got) {
  const ref::Shape& s = c.shape;
  const HeadSlice& h = r.slice;
  const int64_t tokens = s.B * s.T;
  const Tolerances tol;
  const HalfType t = c.options.dtype;
  const std::string tag = slice_tag(h);
  CheckReport rep;
  if (h.covers_group(s)) {
    rep.outputs.push_back(check_output("dq" + tag, slice_heads(got.dq, tokens, s.Hk, s.K, h.k_head, 1),
                                       t, r.bwd.dq, tol.dq));
    rep.outputs.push_back(check_output("dk" + tag, slice_heads(got.dk, tokens, s.Hk, s.K, h.k_head, 1),
                                       t, r.bwd.dk, tol.dk));
  }
  rep.outputs.push_back(check_output("dv" + tag, slice_heads(got.dv, tokens, s.Hv, s.V, h.v_begin, h.v_count),
                                     t, r.bwd.dv, tol.dv));
  rep.outputs.push_back(check_output("dg" + tag, slice_heads(got.dg, tokens, s.Hv, 1, h.v_begin, h.v_count),
                                     r.bwd.dg, tol.dg));
  rep.outputs.push_back(check_output("dbeta" + tag,
                                     slice_heads(got.dbeta, tokens, s.Hv, 1, h.v_begin, h.v_count),
                                     r.bwd.dbeta, tol.dbeta));
  if (!got.dh0.empty())
    rep.outputs.push_back(check_output(
        "dh0" + tag, slice_heads(got.dh0, s.num_seqs(), s.Hv, int64_t(s.K) * s.V, h.v_begin, h.v_count),
        r.bwd.dh0, tol.dh0));
  return rep;
}

void WorstErrors::note(const CheckReport& r, const std::string& where) {
  for (const OutputCheck& c : r.outputs) {
    const std::string name = c.name.substr(0, c.name.find('['));
    auto it = std::find_if(worst_.begin(), worst_.end(), [&](const Worst& w) { return w.output == name; });
    if (it == worst_.end())
      worst_.push_back({name, c.rel_rms, where});
    else if (!(c.rel_rms <= it->rel_rms))  // NaN sticks
      *it = {name, c.rel_rms, where};
  }
}

void WorstErrors::print(const std::string& title) const {
  std::printf("%s worst rel RMS:", title.c_str());
  for (const Worst& w : worst_)
    std::printf(w.where.empty() ? " %s %.2e" : " %s %.2e (%s)", w.output.c_str(), w.rel_rms, w.where.c_str());
  std::printf("\n");
}

namespace {
bool same_float_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}
}  // namespace

// Float outputs compare as bit patterns: == would call two identical NaNs different.
bool same_bits(const DeviceFwdResult& a, const DeviceFwdResult& b) {
  return a.o == b.o && same_float_bits(a.ht, b.ht);
}

bool same_bits(const DeviceBwdResult& a, const DeviceBwdResult& b) {
  return a.dq == b.dq && a.dk == b.dk && a.dv == b.dv && same_float_bits(a.dg, b.dg) &&
         same_float_bits(a.dbeta, b.dbeta) && same_float_bits(a.dh0, b.dh0);
}

}  // namespace gdn::testing::gpu
