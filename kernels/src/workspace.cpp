// Workspace sizes. gdn_*_workspace_size returns the largest need over every compiled variant
// that can implement the problem, so the answer does not depend on the device, on the SM count
// or on which variant a dispatch table later picks: a buffer of that size fits any of them.
#include "workspace.hpp"

#include <algorithm>

#include "candidates.hpp"
#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

gdn_status check_workspace(std::string_view where, const void* workspace, size_t given_bytes,
                           size_t needed_bytes, std::string_view variant_name) {
  if (workspace == nullptr || given_bytes >= needed_bytes) return GDN_OK;
  return reject(GDN_ERROR_WORKSPACE, where, "a->workspace_bytes",
                cat("at least ", needed_bytes, " bytes for variant ", variant_name,
                    " (gdn_*_workspace_size gives a size that fits every variant)"),
                cat(given_bytes, " bytes"));
}

namespace {

size_t largest_workspace(Pass pass, const gdn_problem* p, std::string_view where) {
  if (validate_problem(p, where, nullptr) != GDN_OK) return 0;
  const Candidates c = find_candidates(pass, *p, registry());
  if (c.implementable.empty()) {
    no_candidate_failure(pass, c, where);
    return 0;
  }
  size_t largest = 0;
  for (const Variant* v : c.implementable) largest = std::max(largest, v->workspace_bytes(*p));
  return largest;
}

}  // namespace
}  // namespace gdn::detail

extern "C" size_t gdn_fwd_workspace_size(const gdn_problem* p) {
  return gdn::detail::largest_workspace(gdn::Pass::Forward, p, "gdn_fwd_workspace_size");
}

extern "C" size_t gdn_bwd_workspace_size(const gdn_problem* p) {
  return gdn::detail::largest_workspace(gdn::Pass::Backward, p, "gdn_bwd_workspace_size");
}
