// The first-segment rule (plan/cp_first_segment.hpp).
#include "plan/cp_first_segment.hpp"

#include "plan/prepare_overlap.hpp"  // first_loop_ctas: CP pass 1's working CTAs

namespace gdn::fused {

bool first_segment_in_pass1(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks,
                            int64_t hv, int sms, FirstSegmentSetting setting) {
  if (c.roles != WarpRoles::ColumnWarps || c.cp_segment_chunks <= 0) return false;
  if (setting != FirstSegmentSetting::Rule) return setting == FirstSegmentSetting::On;
  return first_loop_ctas(c, num_seqs, max_chunks, hv) > 2 * int64_t(sms);
}

}  // namespace gdn::fused
