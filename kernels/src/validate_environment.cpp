// validate_environment: the library's environment variables, checked before a launch.
#include <cstdlib>

#include "plan/cp_first_segment.hpp"
#include "plan/prepare_overlap.hpp"
#include "plan/prepare_tail.hpp"
#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {
namespace {

// GDN_OK when the variable `name` is unset or `parse` accepts its value; else the rejection
// naming the variable, the values it takes (`expected`) and the value given.
template <class Parse>
gdn_status check_variable(std::string_view where, const char* name, Parse parse,
                          std::string_view expected) {
  const char* value = std::getenv(name);
  if (parse(value)) return GDN_OK;
  return reject(GDN_ERROR_INVALID_ARGUMENT, where, cat("environment variable ", name), expected,
                cat('"', value, '"'));
}

}  // namespace

gdn_status validate_environment(std::string_view where) {
  const gdn_status overlap = check_variable(
      where, fused::kPrepareOverlapEnv, fused::parse_prepare_overlap,
      "unset, empty, 0 (never overlap the prepare kernel), 1 (shared overlap wherever the "
      "kernel can) or 2 (exclusive overlap wherever it fits)");
  if (overlap != GDN_OK) return overlap;
  const gdn_status first = check_variable(
      where, fused::kCpFirstSegmentEnv, fused::parse_cp_first_segment,
      "unset, empty, 0 (CP pass 1 never runs a first segment's output) or 1 (always, with the "
      "column-warp loop)");
  if (first != GDN_OK) return first;
  return check_variable(where, fused::kPrepareTailEnv, fused::parse_prepare_tail,
                        "unset, empty, 0 (never split the prepare kernel around CP pass 1) or 1 "
                        "(wherever it can: one sequence, the 64-column column-warp loop, CP)");
}

}  // namespace gdn::detail
