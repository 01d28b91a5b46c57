// Filtering the registry by pass and can_implement.
#include "candidates.hpp"

#include "status.hpp"

namespace gdn::detail {

namespace {
constexpr size_t kMaxListedRejections = 8;  // enough to explain, short enough to read
}

const char* pass_name(Pass pass) { return pass == Pass::Forward ? "forward" : "backward"; }

Candidates find_candidates(Pass pass, const gdn_problem& p,
                           std::span<const Variant* const> registry) {
  Candidates c;
  size_t rejected = 0;
  for (const Variant* v : registry) {
    if (v == nullptr || v->pass() != pass) continue;
    ++c.compiled_for_pass;
    const Implementable verdict = v->can_implement(p);
    if (verdict.ok) {
      c.implementable.push_back(v);
    } else if (++rejected <= kMaxListedRejections) {
      c.rejections += cat(c.rejections.empty() ? "" : "; ", v->name(), ": ", verdict.reason);
    }
  }
  if (rejected > kMaxListedRejections)
    c.rejections += cat("; and ", rejected - kMaxListedRejections, " more");
  return c;
}

gdn_status no_candidate_failure(Pass pass, const Candidates& c, std::string_view where) {
  if (c.compiled_for_pass == 0)
    return fail(GDN_ERROR_NOT_AVAILABLE,
                cat(where, ": no kernel variant compiled for the ", pass_name(pass),
                    " pass in this build of libgdn (see the GDN_VARIANTS build option)"));
  return fail(GDN_ERROR_UNSUPPORTED,
              cat(where, ": none of the ", c.compiled_for_pass, " compiled ", pass_name(pass),
                  " variants can implement this problem: ", c.rejections));
}

}  // namespace gdn::detail
