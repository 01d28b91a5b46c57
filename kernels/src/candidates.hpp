// Internal: the compiled variants of one pass that can implement a problem, with the reasons
// of those that cannot (the message when none can).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gdn/variant.hpp"
#include "internal_api.hpp"

namespace gdn::detail {

struct Candidates {
  std::vector<const Variant*> implementable;  // registry order
  size_t compiled_for_pass = 0;               // variants of this pass in the build
  std::string rejections;                     // "name: reason; ..." of those that cannot
};

GDN_INTERNAL_API Candidates find_candidates(Pass pass, const gdn_problem& p,
                                            std::span<const Variant* const> registry);

// The failure when `c.implementable` is empty: NOT_AVAILABLE when the build has no variant
// of the pass, UNSUPPORTED when variants exist but none can implement the problem.
gdn_status no_candidate_failure(Pass pass, const Candidates& c, std::string_view where);

const char* pass_name(Pass pass);

}  // namespace gdn::detail
