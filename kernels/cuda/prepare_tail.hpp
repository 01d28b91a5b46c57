// Whether the fused forward splits its prepare kernel around CP pass 1 (fused_run.cu): the
// prepare kernel first runs only the chunks that pass 1 reads (every chunk before the
// sequence's last segment), and the rest, the last segment's chunks, which only the main pass
// reads, run as a second prepare grid beside pass 1, on the room its last wave of CTAs leaves.
// Host-only and pure, so the rule is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>

#include "gdn/variant_config.hpp"
#include "prepare_overlap.hpp"  // OverlapMode

namespace gdn::fused {

// GDN_PREPARE_TAIL, a benchmarking and testing override of the rule: unset or empty: the rule;
// "0": never; "1": wherever it can run (see prepare_tail_begin).
enum class PrepareTailSetting { Rule, Off, On };
inline constexpr const char* kPrepareTailEnv = "GDN_PREPARE_TAIL";

// The setting a value of the variable names (nullptr: unset); nullopt for any other value.
std::optional<PrepareTailSetting> parse_prepare_tail(const char* value);

// The variable's setting now; an invalid value reads as the rule (gdn_fwd rejects it first).
PrepareTailSetting prepare_tail_setting();

// The first chunk of the tail prepare grid, or 0 for no split. It can run only where
//   - the loop is the 64-column column-warp loop (a 128-column CTA takes an SM's whole
//     register file: no prepare CTA fits beside it), with CP;
//   - the first loop launch follows the prepare kernel (overlap None: beside it, pass 1
//     already shares the SMs with the prepare grid);
//   - there is one sequence (its last segment is then one run of chunks at the table's end:
//     chunks (segments - 1) cp .. max_chunks - 1; a shorter real sequence only moves more of
//     its last segment into the first grid), of two segments or more.
// The rule (when the setting is Rule) also asks that pass 1 take more than one wave of
// cw_ctas_per_sm(64) CTAs per SM, so that its last wave leaves room beside it.
int64_t prepare_tail_begin(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks, int64_t hv,
                           int sms, OverlapMode overlap, PrepareTailSetting setting);

}  // namespace gdn::fused
