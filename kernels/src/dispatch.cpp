// The dispatch decision: candidates from the registry, then the default selection rule.
// A tuned dispatch table (gdnlab export) plugs in here, before the default rule.
#include "dispatch.hpp"

#include "candidates.hpp"
#include "default_selection.hpp"
#include "device.hpp"

namespace gdn::detail {

gdn_status choose_variant(Pass pass, const gdn_problem& p, const ProblemFacts& facts,
                          std::string_view where, const Variant** chosen) {
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  const Candidates c = find_candidates(pass, p, registry());
  if (c.implementable.empty()) return no_candidate_failure(pass, c, where);
  SelectionInput in;
  in.num_seqs = facts.num_seqs;
  in.longest = facts.longest;
  in.Hv = p.Hv;
  in.V = p.V;
  if (gdn_status s = current_sm_count(where, &in.sm_count); s != GDN_OK) return s;
  *chosen = select_default_variant(in, c.implementable);
  return GDN_OK;
}

}  // namespace gdn::detail

extern "C" const char* gdn_fwd_variant_name(const gdn_problem* p) {
  constexpr std::string_view where = "gdn_fwd_variant_name";
  gdn::detail::ProblemFacts facts;
  if (gdn::detail::validate_problem(p, where, &facts) != GDN_OK) return nullptr;
  const gdn::Variant* chosen = nullptr;
  if (gdn::detail::choose_variant(gdn::Pass::Forward, *p, facts, where, &chosen) != GDN_OK)
    return nullptr;
  return chosen->name().c_str();  // variants live as long as the library
}
