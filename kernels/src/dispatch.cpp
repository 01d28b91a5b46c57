// The dispatch decision: candidates from the registry, then the compiled dispatch table (when
// the build has one, -DGDN_DISPATCH_TABLE), then the default selection rule.
#include "dispatch.hpp"

#include <string>
#include <utility>

#include "candidates.hpp"
#include "default_selection.hpp"
#include "device.hpp"

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
  *decision = decide_variant(compiled_dispatch_table(), dispatch_shape(pass, p, facts),
                             c.implementable, registry(), in);
  return GDN_OK;
}

gdn_status choose_variant(Pass pass, const gdn_problem& p, const ProblemFacts& facts,
                          std::string_view where, const Variant** chosen) {
  DispatchDecision decision;
  if (gdn_status s = decide_for_call(pass, p, facts, where, &decision); s != GDN_OK) return s;
  *chosen = decision.variant;
  return GDN_OK;
}

namespace {
gdn_status decide_forward(const gdn_problem* p, std::string_view where, DispatchDecision* d) {
  ProblemFacts facts;
  if (gdn_status s = validate_problem(p, where, &facts); s != GDN_OK) return s;
  return decide_for_call(Pass::Forward, *p, facts, where, d);
}
}  // namespace

}  // namespace gdn::detail

extern "C" const char* gdn_fwd_variant_name(const gdn_problem* p) {
  gdn::detail::DispatchDecision d;
  if (gdn::detail::decide_forward(p, "gdn_fwd_variant_name", &d) != GDN_OK) return nullptr;
  return d.variant->name().c_str();  // variants live as long as the library
}

extern "C" const char* gdn_fwd_dispatch_source(const gdn_problem* p) {
  gdn::detail::DispatchDecision d;
  if (gdn::detail::decide_forward(p, "gdn_fwd_dispatch_source", &d) != GDN_OK) return nullptr;
  thread_local std::string source;  // valid until the next call on this thread
  source = std::move(d.source);
  return source.c_str();
}
