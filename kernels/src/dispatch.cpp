// The dispatch decision: candidates from the registry, then the compiled dispatch table (when
// the build has one, -DGDN_DISPATCH_TABLE), then the default selection rule.
#include "dispatch.hpp"

#include <string>
#include <utility>

#include "candidates.hpp"
#include "default_selection.hpp"
#include "device.hpp"
#include "status.hpp"

namespace gdn::detail {

gdn_status decide_for_call(Pass pass, const gdn_problem& p, const ProblemFacts& facts,
                           std::string_view where, DispatchDecision* decision) {
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  const Candidates c = find_candidates(pass, p, registry());
  if (c.implementable.empty()) return no_candidate_failure(pass, c, where);
  SelectionInput in;
  in.num_seqs = facts.num_seqs;
  in.longest = facts.longest;
  in.tokens = facts.tokens;
  in.Hv = p.Hv;
  in.V = p.V;
  if (gdn_status s = current_sm_count(where, &in.sm_count); s != GDN_OK) return s;
  *decision = decide_variant(active_dispatch_table(), dispatch_shape(pass, p, facts),
                             c.implementable, registry(), in);
  return GDN_OK;
}

gdn_status require_saving_forward(const Variant& v, std::string_view where,
                                  std::string_view argument) {
  if (v.config().family == Family::Fused) return GDN_OK;
  return fail(GDN_ERROR_UNSUPPORTED,
              cat(where, ": ", argument, ": the forward dispatched for this problem, ", v.name(),
                  ", keeps nothing for the backward (a training forward runs a fused variant)"));
}

gdn_launch_options merge_pins(const gdn_launch_options& table, const gdn_launch_options* call) {
  gdn_launch_options out = table;
  if (call == nullptr) return out;
  for (const PlanField& f : kPlanFields)
    if (call->*f.member != GDN_PLAN_RULE) out.*f.member = call->*f.member;
  return out;
}

namespace {
gdn_status decide_pass(Pass pass, const gdn_problem* p, std::string_view where,
                       DispatchDecision* d) {
  ProblemFacts facts;
  if (gdn_status s = validate_problem(p, where, &facts); s != GDN_OK) return s;
  return decide_for_call(pass, *p, facts, where, d);
}

const char* variant_name(Pass pass, const gdn_problem* p, const char* where) {
  DispatchDecision d;
  if (decide_pass(pass, p, where, &d) != GDN_OK) return nullptr;
  return d.variant->name().c_str();  // variants live as long as the library
}

const char* dispatch_source(Pass pass, const gdn_problem* p, const char* where) {
  DispatchDecision d;
  if (decide_pass(pass, p, where, &d) != GDN_OK) return nullptr;
  thread_local std::string source;  // valid until the next call on this thread
  source = std::move(d.source);
  return source.c_str();
}
}  // namespace

}  // namespace gdn::detail

extern "C" const char* gdn_fwd_variant_name(const gdn_problem* p) {
  return gdn::detail::variant_name(gdn::Pass::Forward, p, "gdn_fwd_variant_name");
}

extern "C" const char* gdn_fwd_dispatch_source(const gdn_problem* p) {
  return gdn::detail::dispatch_source(gdn::Pass::Forward, p, "gdn_fwd_dispatch_source");
}

extern "C" const char* gdn_bwd_variant_name(const gdn_problem* p) {
  return gdn::detail::variant_name(gdn::Pass::Backward, p, "gdn_bwd_variant_name");
}

extern "C" const char* gdn_bwd_dispatch_source(const gdn_problem* p) {
  return gdn::detail::dispatch_source(gdn::Pass::Backward, p, "gdn_bwd_dispatch_source");
}
