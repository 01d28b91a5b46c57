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

namespace gdn::detail {

gdn_status validate_call(const gdn_problem* p, const gdn_fwd_args* a, std::string_view where,
                         ProblemFacts* facts) {
  if (gdn_status s = validate_problem(p, where, facts); s != GDN_OK) return s;
  return validate_fwd_args(*p, a, *facts, where);
}

gdn_status validate_call(const gdn_problem* p, const gdn_bwd_args* a, std::string_view where,
                         ProblemFacts* facts) {
  if (gdn_status s = validate_problem(p, where, facts); s != GDN_OK) return s;
  return validate_bwd_args(*p, a, *facts, where);
}

}  // namespace gdn::detail

extern "C" gdn_status gdn_validate_fwd(const gdn_problem* p, const gdn_fwd_args* a) {
  gdn::detail::ProblemFacts facts;
  return gdn::detail::validate_call(p, a, kValidateFwd, &facts);
}

extern "C" gdn_status gdn_validate_bwd(const gdn_problem* p, const gdn_bwd_args* a) {
  gdn::detail::ProblemFacts facts;
  return gdn::detail::validate_call(p, a, kValidateBwd, &facts);
}
