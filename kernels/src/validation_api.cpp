// The public validation entry points.
#include "validation.hpp"

namespace {
constexpr std::string_view kValidateProblem = "gdn_validate_problem";
constexpr std::string_view kValidateFwd = "gdn_validate_fwd";
constexpr std::string_view kValidateBwd = "gdn_validate_bwd";
}  // namespace

extern "C" gdn_status gdn_validate_problem(const gdn_problem* p) {
  return gdn::detail::validate_problem(p, kValidateProblem, nullptr);
}

extern "C" gdn_status gdn_validate_fwd(const gdn_problem* p, const gdn_fwd_args* a) {
  gdn::detail::ProblemFacts facts;
  if (gdn_status s = gdn::detail::validate_problem(p, kValidateFwd, &facts); s != GDN_OK)
    return s;
  return gdn::detail::validate_fwd_args(*p, a, facts, kValidateFwd);
}

extern "C" gdn_status gdn_validate_bwd(const gdn_problem* p, const gdn_bwd_args* a) {
  gdn::detail::ProblemFacts facts;
  if (gdn_status s = gdn::detail::validate_problem(p, kValidateBwd, &facts); s != GDN_OK)
    return s;
  return gdn::detail::validate_bwd_args(*p, a, facts, kValidateBwd);
}
