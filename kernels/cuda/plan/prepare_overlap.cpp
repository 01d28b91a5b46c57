// The prepare-overlap rule and its environment override (plan/prepare_overlap.hpp).
#include "plan/prepare_overlap.hpp"

#include <cstdlib>

#include "plan/env_setting.hpp"

namespace gdn::fused {

std::optional<PrepareOverlap> parse_prepare_overlap(const char* value) {
  return parse_env_setting(value, PrepareOverlap::Rule,
                           {{"0", PrepareOverlap::Off},
                            {"1", PrepareOverlap::Shared},
                            {"2", PrepareOverlap::Exclusive}});
}

PrepareOverlap prepare_overlap_setting() {
  return parse_prepare_overlap(std::getenv(kPrepareOverlapEnv)).value_or(PrepareOverlap::Rule);
}

int64_t first_loop_ctas(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks, int64_t hv) {
  if (c.block_v <= 0) return 0;
  if (c.cp_segment_chunks <= 0) return num_seqs * hv * (128 / c.block_v);
  const int64_t cp = c.cp_segment_chunks;
  const int64_t segments = (max_chunks + cp - 1) / cp;
  const int64_t non_last = segments > num_seqs ? segments - num_seqs : 0;
  // A sequence's first segment (when it is not also its last) runs only its N columns: at
  // most min(N, non_last) of the non-last segments are first ones.
  const int64_t firsts = non_last < num_seqs ? non_last : num_seqs;
  return (2 * non_last - firsts) * hv * (128 / c.block_v);
}

OverlapMode prepare_overlap_mode(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks,
                                 int64_t hv, int sms, PrepareOverlap setting) {
  const bool can = c.family == Family::Fused && c.roles == WarpRoles::ColumnWarps && c.block_v == 64;
  if (!can || setting == PrepareOverlap::Off) return OverlapMode::None;
  const int64_t ctas = first_loop_ctas(c, num_seqs, max_chunks, hv);
  const bool fits_alone = ctas > 0 && ctas < sms;  // at least one SM left to the prepare
  switch (setting) {
    case PrepareOverlap::Shared: return OverlapMode::Shared;
    case PrepareOverlap::Exclusive: return fits_alone ? OverlapMode::Exclusive : OverlapMode::Shared;
    default: break;
  }
  // The loop's units: CP segments (cp chunks), else the sequences (their mean length: the
  // longest is not known here without a device copy).
  const int64_t seq_chunks = num_seqs > 0 ? max_chunks / num_seqs : 0;
  const int64_t unit_chunks =
      c.cp_segment_chunks > 0 && c.cp_segment_chunks < seq_chunks ? c.cp_segment_chunks : seq_chunks;
  if (ctas > 0 && 2 * ctas <= sms && unit_chunks >= kMinExclusiveUnitChunks)
    return OverlapMode::Exclusive;
  if (ctas > 0 && ctas <= sms) return OverlapMode::Shared;
  return OverlapMode::None;
}

}  // namespace gdn::fused
