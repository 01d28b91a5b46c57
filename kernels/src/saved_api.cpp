// gdn_saved_init: the size and segment length of a training forward's saved block (gdn.h,
// gdn_saved). The segment length is the dispatched backward's: its forward recompute's CP
// segments (the launch plan's recompute_cp_chunks, with the table entry's pins), so that the
// forward's CP, run in those segments, leaves the start states and transitions the
// backward's recompute would compute.
#include "device.hpp"
#include "dispatch.hpp"
#include "gdn/launch_plan.hpp"
#include "status.hpp"
#include "training/saved_size.hpp"
#include "validation.hpp"

namespace gdn::detail {
namespace {

constexpr std::string_view kWhere = "gdn_saved_init";

gdn_status saved_init(const gdn_problem* p, gdn_saved* s) {
  if (s == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "s", "a pointer to a gdn_saved", "NULL");
  ProblemFacts facts;
  if (gdn_status st = validate_problem(p, kWhere, &facts); st != GDN_OK) return st;
  if (gdn_status st = require_device(kWhere); st != GDN_OK) return st;
  DispatchDecision fwd;
  if (gdn_status st = decide_for_call(Pass::Forward, *p, facts, kWhere, &fwd); st != GDN_OK) return st;
  if (gdn_status st = require_saving_forward(*fwd.variant, kWhere, "p"); st != GDN_OK) return st;
  DispatchDecision bwd;
  if (gdn_status st = decide_for_call(Pass::Backward, *p, facts, kWhere, &bwd); st != GDN_OK) return st;
  int segment_chunks = 0;
  if (bwd.variant->config().family == Family::Fused) {
    int sms = 0;
    if (gdn_status st = current_sm_count(kWhere, &sms); st != GDN_OK) return st;
    segment_chunks =
        plan_backward(bwd.variant->config(), plan_shape(*p), PlanDevice{sms}, &bwd.plan).recompute_cp_chunks;
  }
  s->data = nullptr;
  s->bytes = fused::saved_bytes(*p, segment_chunks);
  s->segment_chunks = segment_chunks;
  return GDN_OK;
}

size_t saved_size(const gdn_problem* p, int32_t segment_chunks) {
  constexpr std::string_view where = "gdn_saved_size";
  if (validate_problem(p, where, nullptr) != GDN_OK) return 0;
  KernelConfig probe;
  probe.cp_segment_chunks = segment_chunks;
  if (!check_config(probe).ok) {
    reject(GDN_ERROR_INVALID_ARGUMENT, where, "segment_chunks",
           "0 or a power of two in [4, 256]", cat(segment_chunks));
    return 0;
  }
  return fused::saved_bytes(*p, segment_chunks);
}

}  // namespace
}  // namespace gdn::detail

extern "C" gdn_status gdn_saved_init(const gdn_problem* p, gdn_saved* s) {
  return gdn::detail::saved_init(p, s);
}

extern "C" size_t gdn_saved_size(const gdn_problem* p, int32_t segment_chunks) {
  return gdn::detail::saved_size(p, segment_chunks);
}
