// Whether the fused forward's first chunk loop launches beside the prepare kernel (its
// programmatic dependent, polling per-chunk ready counts) or after it has completed, and
// beside it how (forward/run.cu):
//   Shared:    a persistent prepare grid of two CTAs per SM fills the rest of each SM, a loop
//              CTA beside two prepare CTAs;
//   Exclusive: the prepare grid leaves as many SMs as the loop has CTAs (its CTAs there exit
//              at once) and runs four CTAs on each of the others; the loop's CTAs, padded to
//              more than half an SM's shared memory, take the free SMs one each, so that no
//              prepare CTA competes with a loop CTA for its SM's tensor cores and issue slots.
// Host-only and pure, so the rule is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gdn/variant_config.hpp"

namespace gdn::fused {

// GDN_PREPARE_OVERLAP, a benchmarking and debugging override of the rule: unset or empty:
// the rule; "0": never; "1": shared wherever the loop can (the 64-column column-warp loop);
// "2": exclusive wherever the loop can and its first launch has fewer CTAs than the GPU has
// SMs (else shared).
enum class PrepareOverlap { Rule, Off, Shared, Exclusive };
inline constexpr const char* kPrepareOverlapEnv = "GDN_PREPARE_OVERLAP";

// How the first loop launch runs: after the prepare kernel, or beside it (shared, exclusive).
enum class OverlapMode { None, Shared, Exclusive };

// The setting a value of the variable names (nullptr: unset); nullopt for any other value.
std::optional<PrepareOverlap> parse_prepare_overlap(const char* value);

// The variable's setting now; an invalid value reads as the rule (gdn_fwd rejects it first).
PrepareOverlap prepare_overlap_setting();

// CTAs of the first chunk-loop launch after the prepare kernel: the Output pass without CP
// (num_seqs x Hv x 128 / block_v), CP pass 1 with it (its working CTAs, estimated from the
// chunk count: every segment but each sequence's last, over the [M | N] columns, but only
// the N columns of a sequence's first segment).
int64_t first_loop_ctas(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks, int64_t hv);

// The loop's CTA fits on an SM beside two prepare CTAs only at 64 columns (the 128-column one
// takes the whole register file). The rule: exclusive when the first loop launch has at most
// one CTA per two SMs (the prepare then keeps at least half of the SMs, at full occupancy)
// and its units (sequences, or CP segments) are kMinExclusiveUnitChunks chunks long or more
// (measured, session 9 call 1, bench/results/h200_2026-11-30_s9/: 5-19 % faster on the
// anchor rows of 64 to 512 chunks per unit; on units of 32 chunks the prepare's head start
// dominates and 3 of 5 rows were 9-11 % slower, 16/16 and 16/32 equal, only 32/32 faster);
// shared up to one CTA per SM (measured, session 7: then the loop alone leaves most of the GPU
// to the prepare; with more, the loop's CTAs past one per SM wait for the prepare grid to
// finish, and the prepare runs at half its occupancy); else after the prepare kernel.
inline constexpr int64_t kMinExclusiveUnitChunks = 64;
OverlapMode prepare_overlap_mode(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks,
                                 int64_t hv, int sms, PrepareOverlap setting);

}  // namespace gdn::fused
