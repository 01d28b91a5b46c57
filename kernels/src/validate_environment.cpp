// validate_environment: the library's environment variables, checked before a launch.
#include <cstdlib>

#include "cp_first_segment.hpp"
#include "prepare_overlap.hpp"
#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

gdn_status validate_environment(std::string_view where) {
  const char* overlap = std::getenv(fused::kPrepareOverlapEnv);
  if (!fused::parse_prepare_overlap(overlap))
    return reject(GDN_ERROR_INVALID_ARGUMENT, where,
                  cat("environment variable ", fused::kPrepareOverlapEnv),
                  "unset, empty, 0 (never overlap the prepare kernel), 1 (shared overlap "
                  "wherever the kernel can) or 2 (exclusive overlap wherever it fits)",
                  cat('"', overlap, '"'));
  const char* first_segment = std::getenv(fused::kCpFirstSegmentEnv);
  if (!fused::parse_cp_first_segment(first_segment))
    return reject(GDN_ERROR_INVALID_ARGUMENT, where,
                  cat("environment variable ", fused::kCpFirstSegmentEnv),
                  "unset, empty, 0 (CP pass 1 never runs a first segment's output) or 1 "
                  "(always, with the column-warp loop)",
                  cat('"', first_segment, '"'));
  return GDN_OK;
}

}  // namespace gdn::detail
