// The default selection rule: which variant runs when no tuned dispatch table decides.
//
// Why it looks the way it does. GDN prefill is a recurrence: per (sequence, value head) the
// chunks of a sequence run one after another, and one CTA owns one (chain, V-block). The
// measured lesson (docs/decisions/cp-and-chain-length.md) is that chain length, not arithmetic, sets the time once
// the GPU is not full: the same tokens in twice as many half-length chains ran twice as fast.
// So the rule, step by step, each step narrowing the candidates:
//   1. family:  the fused family when one is compiled and implementable (state in registers,
//               one launch); the staged decomposition is the correctness baseline, the fallback.
//      layout:  the column-warp loop (WarpRoles::ColumnWarps) when one remains: on the H200 it
//               beat the producer/consumer and cooperative loops on every shape of the loop
//               bench (docs/decisions/column-warp-loop.md; e.g. 8192x4 at
//               16/64 heads 1.95 ms against 2.79 and 4.14) and won every bucket of an
//               anchor sweep. Steps 2-5 then choose among its block_v and CP segments.
//   2. block_v: for the column-warp loop the narrowest (64): in an anchor sweep of every
//               column-warp variant (docs/decisions/block-v-64.md) its 64-column
//               variants were fastest on 169 of 171 rows and within 4.5 % on the other two,
//               while the fill rule below picked 128 columns where that cost up to 1.30x
//               (2 x 32768 tokens at 16/64 heads). Two 64-column CTAs per SM hold as many math
//               warpgroups as one 128-column CTA, with a smaller ring each. Other layouts:
//               splitting V creates more CTAs but each V-block repeats the K-side work of its
//               chunk (k k^T, the inverse, the gate products). Take the largest block_v whose
//               CTA count, chains * V / block_v, fills at least 3/4 of the CTA slots (SMs x the
//               CTAs of that block_v resident per SM, from registers and shared memory; 1 when
//               unknown); when even the smallest cannot, take the smallest. Why 3/4, not all:
//               on the H200 one 64-column CTA per SM over 128 of 132 SMs (1x32768 tokens, 64
//               heads) took 2.9 ms where twice the 32-column CTAs took 3.9 ms, while at 48% of
//               the SMs (64 CTAs) the 32-column split won (0.54 against 0.64 ms).
//   3. CP:      exact context parallelism costs a transition pass and a fix-up, so it is only
//               used when fewer CTAs than 1/4 of the slots exist and the longest sequence is
//               longer than one segment; it cuts that sequence into segments of
//               cp_segment_chunks chunks: the longest segment that brings the CTAs to 3/4 of
//               the slots (fewest segments: least fix-up work); when none does, the shortest
//               segment that still splits. Otherwise CP off, when such a variant exists.
//               (H200, 32-column blocks: 1x32768 tokens with 8 heads, 32 CTAs, ran best with
//               128-chunk segments, 1.0 ms against 1.9 ms unsplit; 4x8192 with 8 heads, 128
//               CTAs, ran best unsplit.)
//               The column-warp loop (whose CP pass 1 runs in its own layout) has its own
//               step, fitted to an anchor sweep of its variants (the tensor-core
//               fix-up with prefetched transfers made short segments cheap; a CPU test replays
//               the sweep): the slots are the SMs (one CTA each, not its two per SM); CP when
//               the unsplit launch leaves more than half of them idle and the longest sequence
//               has at least 64 chunks (shorter ones mostly ran best unsplit). With the
//               exclusive prepare overlap (64 columns, at most one CTA per two SMs: the
//               prepare kernel runs on the SMs the loop leaves) the unsplit loop
//               got 5-19 % faster, and CP now pays only while the CTAs busy along the longest
//               chain (each sequence's CTAs weighted by its length over the longest's) are
//               under 2/5 of the SMs: unsplit at 64 CTAs (1 x 32768 at 32/32: 0.77 ms against
//               0.98 in 128-chunk segments), split at 48 (8/24: 0.61 against 0.72) and for
//               ragged pairs whose long sequence dominates (28672 + 4096 at 16/16: 0.53
//               against 0.63). Replayed over the committed sweep: 1.7 %, worst 1.26x. A segment
//               length's CTAs are those of every sequence's segments (about total chunks /
//               segment), and the longest segment that fills 3/4 of the SMs wins, else the
//               shortest that splits. On the sweep it was fitted to, against the fastest variant of each of the 171 anchor
//               rows the rule (with step 2) is 2.2 % slower (geometric mean, worst row 1.23x);
//               the earlier step (a quarter idle, 96 chunks) with the fill rule's block_v
//               would be 3.4 % (worst 1.30x) on the same sweep.
//   4. warp roles: the layout with the most warps resident per SM (CTAs per SM x threads per
//               CTA, when known): the producer/consumer CTA of 8 warps against one cooperative
//               CTA of 4 at 64 columns. When equal (or unknown): producer/consumer when the
//               launch has at most one CTA per SM, where the serial chain is the critical path
//               and the output products run beside it; cooperative otherwise, where two CTAs
//               per SM already hide each other's latency.
//   5. the rest (pipeline stages): first in registry order; a tuned table
//               (gdnlab export) is where measured preferences belong.
// The chunked backward (Pass::Backward, Family::Fused) has steps of its own. Where the pool
// has the fused backward kernel (producer-consumer roles: the reverse chain and the local
// gradients in one kernel per (sequence or segment, value head), all 128 columns):
//   1''. that kernel: on an H100 the fastest of every backward family on all 32 backward
//               anchor rows (its sweep at the two input groups,
//               bench/results/h100_2026-12-08_fused_backward_load_groups/rows32_head.sqlite,
//               against the sweep of the others, bench/results/h100_2026-12-07_backward_sweep.sqlite:
//               1.008x to 1.315x);
//   2''. block_v: its one width, 128;
//   3''. CP when the CTAs busy along the longest chain (as in 3' below) are under half the
//               slots (one CTA per SM), then the longest segment whose CTAs fill 3/4 of the
//               slots, else the shortest that splits: its chunk step is long (about 11 us),
//               so splitting pays until half the SMs are busy, where the chain's step 3'
//               stops at a quarter. On that sweep: 1.9 % from the fastest segment length
//               (geometric mean), worst 1.18x (8/16 heads, 32k tokens in 8 sequences, the longest
//               10180: 128-chunk segments against 32); step 3' would be 5.0 %, worst 1.46x.
//               A CPU test replays it over that sweep.
// Otherwise its one V-blocked kernel is the reverse chain, so
//   1'. column-warp roles (the chain on wgmma fed by a TMA producer warp, 64 columns, one CTA
//               per SM) where the pool has them: over the 32 rows of the backward anchor
//               sweep of both chains (bench/results/h200_2026-12-02_backward_sweep.sqlite) the
//               fastest column-warp variant at the plan rules beats the fastest cooperative
//               one (4 warps on mma.sync, two CTAs per SM) on every row, by 1.171x (geometric
//               mean; 1.080x to 1.241x);
//   2'. block_v: the column-warp chain's one width, 64; the cooperative chain's 32 (16 columns
//               won only single-sequence 16/32 rows, by 1 %, and lost up to 10 % with several
//               sequences: docs/decisions/backward-chain-16.md; the table takes it where it
//               wins);
//   3'. CP when the chain CTAs busy along the longest chain (each sequence's weighted by its
//               length over the longest's) are under a quarter of the slots (SMs x CTAs per
//               SM), then the longest segment whose CTAs, over every sequence's segments, fill
//               3/4 of the slots, else the shortest that splits. Column-warp chain, the 32 rows
//               of that sweep: 1.6 % from the fastest candidate, pins included (geometric
//               mean), worst 1.11x (8/16 heads, 2 sequences of 8192 tokens); cooperative chain, the 32 rows of the
//               earlier sweep (bench/results/h200_2026-12-01_plan_sweeps.sqlite, sweep 1): 1 %,
//               worst 1.07x; the forward's step 3 (longest sequence only, block_v first) was
//               7 %, worst 1.48x. CPU tests replay rows of both sweeps.
// Every step keeps at least one candidate: a preferred value is only taken when some remaining
// candidate has it, so the rule works for any subset of the variant space a build compiles.
#include "default_selection.hpp"

#include <algorithm>
#include <functional>
#include <set>
#include <vector>

#include "gdn/launch_plan.hpp"

namespace gdn::detail {

namespace {

using Pool = std::vector<const Variant*>;

Pool keep_if(const Pool& pool, const std::function<bool(const KernelConfig&)>& keep) {
  Pool kept;
  for (const Variant* v : pool)
    if (keep(v->config())) kept.push_back(v);
  return kept.empty() ? pool : kept;
}

std::set<int> values_of(const Pool& pool, int KernelConfig::*field) {
  std::set<int> values;
  for (const Variant* v : pool) values.insert(v->config().*field);
  return values;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// CTAs of a non-CP launch: one per (sequence, value head, V-block).
int64_t ctas_without_cp(const SelectionInput& in, int block_v) {
  return in.num_seqs * in.Hv * ceil_div(in.V, block_v);
}

// CTAs that run at once with the candidates of this block_v: SMs x CTAs resident per SM (the
// fewest among them; 1 when unknown, as without a device).
int64_t cta_slots(const SelectionInput& in, const Pool& pool, int block_v) {
  int per_sm = 0;
  for (const Variant* v : pool) {
    if (v->config().block_v != block_v) continue;
    const int n = std::max(1, v->resources().ctas_per_sm);
    per_sm = per_sm == 0 ? n : std::min(per_sm, n);
  }
  return int64_t{in.sm_count} * std::max(1, per_sm);
}

// At least 3/4 of the slots busy (step 2 and 3 of the rule).
bool fills(int64_t ctas, int64_t slots) { return 4 * ctas >= 3 * slots; }

bool all_column_warps(const Pool& pool) {
  for (const Variant* v : pool)
    if (v->config().roles != WarpRoles::ColumnWarps) return false;
  return true;
}

int choose_block_v(const SelectionInput& in, const Pool& pool) {
  const std::set<int> block_vs = values_of(pool, &KernelConfig::block_v);
  // The column-warp loop: the narrowest block (see the rule's comment, step 2).
  if (all_column_warps(pool)) return *block_vs.begin();
  for (auto it = block_vs.rbegin(); it != block_vs.rend(); ++it)
    if (fills(ctas_without_cp(in, *it), cta_slots(in, pool, *it))) return *it;
  return *block_vs.begin();
}

// The longest segment whose CTAs, over every sequence's segments, fill 3/4 of the slots; else
// the shortest that splits the longest sequence; else CP off (or the only segment there is):
// gdn/launch_plan.hpp's, which the backward's recompute plan uses too.
int segment_filling_slots(const SelectionInput& in, const std::set<int>& segments, int64_t longest_chunks,
                          int64_t total_chunks, int64_t ctas_per_segment, int64_t slots) {
  const std::vector<int> ascending(segments.begin(), segments.end());
  return gdn::segment_filling_slots(ascending,
                                    SegmentFill{in.num_seqs, longest_chunks, total_chunks, ctas_per_segment, slots});
}

// The column-warp loop's step 3 (see the rule's comment). segments: the pool's values.
int choose_cp_segment_cw(const SelectionInput& in, int block_v, const std::set<int>& segments) {
  const bool off_available = segments.count(0) != 0;
  const int64_t slots = in.sm_count;
  const int64_t longest_chunks = ceil_div(in.longest, kChunk);
  const int64_t tokens = in.tokens > 0 ? in.tokens : in.num_seqs * in.longest;
  const int64_t total_chunks = ceil_div(tokens, kChunk);
  const int64_t ctas_per_segment = int64_t{in.Hv} * ceil_div(in.V, block_v);
  const int64_t ctas = ctas_without_cp(in, block_v);
  // Unsplit at 64 columns with at most one CTA per two SMs, the prepare kernel runs beside the
  // loop on the SMs its CTAs leave (gdn/launch_plan.hpp: exclusive overlap): then CP only pays while
  // the CTAs busy along the longest chain, total chunks / longest chunks sequences' worth, are
  // under 2/5 of the SMs. Else CP when more than half of the SMs would idle.
  const bool exclusive_overlap = block_v == 64 && 2 * ctas <= slots;
  const bool idle = exclusive_overlap
                        ? 5 * ctas_per_segment * total_chunks < 2 * slots * std::max<int64_t>(1, longest_chunks)
                        : 2 * ctas < slots;
  if ((!idle || longest_chunks < kColumnWarpCpMinChunks) && off_available) return 0;
  return segment_filling_slots(in, segments, longest_chunks, total_chunks, ctas_per_segment, slots);
}

bool all_chunked_backward(const Pool& pool) {
  for (const Variant* v : pool)
    if (v->config().pass != Pass::Backward || v->config().family != Family::Fused) return false;
  return true;
}

// The chunked backward's step 2' and 3' (see the rule's comment; its step 1' is step 1's
// column-warp preference, whose backward variants are the wgmma chain).
constexpr int kChainBlockV = 32;

// Unsplit when the CTAs busy along the longest chain are at least 1 / idle_parts of the slots
// (4 for the reverse chain's step 3', 2 for the fused kernel's step 3'').
int choose_cp_segment_chain(const SelectionInput& in, const Pool& pool, int block_v, int idle_parts) {
  const std::set<int> segments = values_of(pool, &KernelConfig::cp_segment_chunks);
  const bool off_available = segments.count(0) != 0;
  const int64_t slots = cta_slots(in, pool, block_v);
  const int64_t longest_chunks = std::max<int64_t>(1, ceil_div(in.longest, kChunk));
  const int64_t tokens = in.tokens > 0 ? in.tokens : in.num_seqs * in.longest;
  const int64_t total_chunks = ceil_div(tokens, kChunk);
  const int64_t ctas_per_segment = int64_t{in.Hv} * ceil_div(in.V, block_v);
  // idle_parts x (CTAs busy along the longest chain) >= slots, in integers.
  if (idle_parts * ctas_per_segment * total_chunks >= slots * longest_chunks && off_available) return 0;
  return segment_filling_slots(in, segments, longest_chunks, total_chunks, ctas_per_segment, slots);
}

bool has_roles(const Pool& pool, WarpRoles roles) {
  return std::any_of(pool.begin(), pool.end(), [&](const Variant* v) { return v->config().roles == roles; });
}

// The chunked backward's fused kernel (steps 1'' to 3'' of the rule's comment).
const Variant* select_fused_backward(const SelectionInput& in, Pool pool) {
  pool = keep_if(pool, [](const KernelConfig& c) { return c.roles == WarpRoles::ProducerConsumer; });
  const int block_v = *values_of(pool, &KernelConfig::block_v).rbegin();
  pool = keep_if(pool, [&](const KernelConfig& c) { return c.block_v == block_v; });
  const int segment = choose_cp_segment_chain(in, pool, block_v, 2);
  pool = keep_if(pool, [&](const KernelConfig& c) { return c.cp_segment_chunks == segment; });
  return pool.front();
}

// Returns the chosen cp_segment_chunks (0 = off).
int choose_cp_segment(const SelectionInput& in, int block_v, const Pool& pool) {
  const std::set<int> segments = values_of(pool, &KernelConfig::cp_segment_chunks);
  if (all_column_warps(pool)) return choose_cp_segment_cw(in, block_v, segments);
  const bool off_available = segments.count(0) != 0;
  const int64_t ctas = ctas_without_cp(in, block_v);
  const int64_t slots = cta_slots(in, pool, block_v);
  if (4 * ctas >= slots && off_available) return 0;
  const int64_t longest_chunks = ceil_div(in.longest, kChunk);
  // Only the longest sequence is counted: it is the critical path, the others add CTAs.
  const int64_t ctas_per_segment = int64_t{in.Hv} * ceil_div(in.V, block_v);
  int best_filling = 0, shortest_splitting = 0;
  for (int segment : segments) {  // ascending
    if (segment == 0 || segment >= longest_chunks) continue;  // would not split anything
    if (shortest_splitting == 0) shortest_splitting = segment;
    if (fills(ctas_per_segment * ceil_div(longest_chunks, segment), slots))
      best_filling = segment;  // ascending: ends at the longest filling segment
  }
  if (best_filling != 0) return best_filling;
  if (shortest_splitting != 0) return shortest_splitting;
  return off_available ? 0 : *segments.begin();
}

int64_t ctas_with_cp(const SelectionInput& in, int block_v, int segment) {
  if (segment == 0) return ctas_without_cp(in, block_v);
  const int64_t segments_of_longest = ceil_div(ceil_div(in.longest, kChunk), segment);
  return std::max(ctas_without_cp(in, block_v),
                  int64_t{in.Hv} * ceil_div(in.V, block_v) * segments_of_longest);
}

// Warps resident per SM of a variant; 0 when its resources are unknown.
int resident_warps(const Variant& v) {
  const auto r = v.resources();
  return r.ctas_per_sm > 0 && r.threads > 0 ? r.ctas_per_sm * (r.threads / 32) : 0;
}

WarpRoles choose_roles(const SelectionInput& in, const Pool& pool, int64_t ctas) {
  int most = 0;
  for (const Variant* v : pool) most = std::max(most, resident_warps(*v));
  std::set<WarpRoles> with_most;
  for (const Variant* v : pool)
    if (resident_warps(*v) == most) with_most.insert(v->config().roles);
  if (with_most.size() == 1) return *with_most.begin();
  return ctas <= in.sm_count ? WarpRoles::ProducerConsumer : WarpRoles::Cooperative;
}

}  // namespace

const Variant* select_default_variant(const SelectionInput& in,
                                      std::span<const Variant* const> implementable) {
  if (implementable.empty()) return nullptr;
  Pool pool(implementable.begin(), implementable.end());
  pool = keep_if(pool, [](const KernelConfig& c) { return c.family == Family::Fused; });
  if (all_chunked_backward(pool) && has_roles(pool, WarpRoles::ProducerConsumer))
    return select_fused_backward(in, pool);
  pool = keep_if(pool, [](const KernelConfig& c) { return c.roles == WarpRoles::ColumnWarps; });

  const bool chain = all_chunked_backward(pool);
  const int block_v = chain && values_of(pool, &KernelConfig::block_v).count(kChainBlockV)
                          ? kChainBlockV
                          : choose_block_v(in, pool);
  pool = keep_if(pool, [&](const KernelConfig& c) { return c.block_v == block_v; });

  const int segment = chain ? choose_cp_segment_chain(in, pool, block_v, 4) : choose_cp_segment(in, block_v, pool);
  pool = keep_if(pool, [&](const KernelConfig& c) { return c.cp_segment_chunks == segment; });

  const WarpRoles roles = choose_roles(in, pool, ctas_with_cp(in, block_v, segment));
  pool = keep_if(pool, [&](const KernelConfig& c) { return c.roles == roles; });

  return pool.front();
}

}  // namespace gdn::detail
