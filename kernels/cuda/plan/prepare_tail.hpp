// Whether the fused forward splits its prepare kernel around CP pass 1 (forward/run.cu): the
// prepare kernel first runs only the chunks that pass 1 reads (every chunk before the
// sequence's last segment), and the rest, the last segment's chunks, which only the main pass
// reads, run as a second prepare grid beside pass 1, on the room its last wave of CTAs leaves.
// Host-only and pure, so the rule is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>

#include "plan/env_setting.hpp"
#include "gdn/variant_config.hpp"
#include "plan/prepare_overlap.hpp"  // OverlapMode

namespace gdn::fused {

// GDN_PREPARE_TAIL, a benchmarking and testing override of the rule (an OnOffSetting: "1":
// wherever the split can run, see prepare_tail_begin).
using PrepareTailSetting = OnOffSetting;
inline constexpr const char* kPrepareTailEnv = "GDN_PREPARE_TAIL";
inline std::optional<PrepareTailSetting> parse_prepare_tail(const char* value) {
  return parse_on_off(value);
}
inline PrepareTailSetting prepare_tail_setting() { return on_off_setting(kPrepareTailEnv); }

// The first chunk of the tail prepare grid, or 0 for no split. It can run only where
//   - the loop is the 64-column column-warp loop (a 128-column CTA takes an SM's whole
//     register file: no prepare CTA fits beside it), with CP;
//   - the first loop launch follows the prepare kernel (overlap None: beside it, pass 1
//     already shares the SMs with the prepare grid);
//   - there is one sequence (its last segment is then one run of chunks at the table's end:
//     chunks (segments - 1) cp .. max_chunks - 1; a shorter real sequence only moves more of
//     its last segment into the first grid), of two segments or more.
// The rule (when the setting is Rule) also asks that pass 1's last wave of two CTAs per SM
// leave at least a third of the wave's slots free, where the tail's CTAs run beside it.
// Measured (session 13 calls 1 and 2, bench/results/h200_2026-12-01_s13/ab_prepare_tail_call*.txt,
// every 1xT anchor row in the dispatch's variant): with 104 or 112 free slots of 264 (16/16 and
// 4/16 in 8- to 64-chunk segments) 1.4-5 % faster; with 184 (2/8 at 1x2048, 48 us) within
// 0.2 %; with 56 (2/8) within +-0.8 %; with 24 (8/24 in 16- and 32-chunk segments, a quarter
// of the prepare in the tail) 7-9 % slower.
inline constexpr int kTailMinFreeSlotsDivisor = 3;  // free slots >= wave / 3
int64_t prepare_tail_begin(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks, int64_t hv,
                           int sms, OverlapMode overlap, PrepareTailSetting setting);

}  // namespace gdn::fused
