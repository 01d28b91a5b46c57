// Whether CP pass 1 of the column-warp loop runs each sequence's first segment as its output
// (forward/chunk_loop_cw.cuh: its N columns' CTAs take the Output loop from h0 and leave the end
// state where pass 1 would; the main pass then skips the segment). Host-only and pure, so the
// rule is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>

#include "plan/env_setting.hpp"
#include "gdn/variant_config.hpp"

namespace gdn::fused {

// GDN_CP_FIRST_SEGMENT, a benchmarking and testing override of the rule (an OnOffSetting:
// "1": wherever the column-warp loop runs CP).
using FirstSegmentSetting = OnOffSetting;
inline constexpr const char* kCpFirstSegmentEnv = "GDN_CP_FIRST_SEGMENT";
inline std::optional<FirstSegmentSetting> parse_cp_first_segment(const char* value) {
  return parse_on_off(value);
}
inline FirstSegmentSetting cp_first_segment_setting() { return on_off_setting(kCpFirstSegmentEnv); }

// The rule. The Output loop takes longer per chunk than the transition loop, so the first
// segments' CTAs outlast the others when pass 1 is one wave: measured (session 10 call 8,
// bench/results/h200_2026-11-30_s10/ab_first_segment_call8.txt) 9-23 % slower on every row
// whose pass 1 fits two CTAs per SM (240 or fewer working CTAs), and 1-2.7 % faster with 416
// (1x32768 at 4/16 and 16/16 in 64-chunk segments), where pass 1 takes a second wave anyway
// and the main pass, bound by DRAM bandwidth, loses a segment in eight. So: only past two
// pass-1 CTAs per SM, and only for the column-warp loop (it runs both passes).
bool first_segment_in_pass1(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks,
                            int64_t hv, int sms, FirstSegmentSetting setting);

}  // namespace gdn::fused
