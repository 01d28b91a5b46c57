// The default launch plan of each pass and the pins that override it (gdn/launch_plan.hpp).
// Each rule keeps the measurements that justify it next to it.
#include "gdn/launch_plan.hpp"

#include <algorithm>
#include <charconv>

namespace gdn {

namespace {

constexpr int kChunkRows = kChunk;
constexpr int kStateCols = 128;  // V: the only value head dim the kernels run

// ---- the prepare kernel's grid --------------------------------------------------------------

constexpr int kMaxPrepareHeads = 8;  // v-heads per prepare CTA at most (they share one k head)
// CTAs per SM of the persistent prepare grid beside a loop (overlap or tail): two of 55 KB and
// at most 64 registers x 256 threads leave 118 KB and half the register file, one 64-column
// column-warp loop CTA's worth, on every SM.
constexpr int kPersistentCtasPerSm = 2;
// CTAs per SM of the prepare grid alone (55 KB each, the full shared carveout).
constexpr int kAloneCtasPerSm = 4;

// v-heads per CTA: a divisor of the group (so the run shares one k head), at most
// kMaxPrepareHeads. More heads per CTA share the loads and products of k and q over more heads
// but leave fewer CTAs to fill the GPU. Model: an item costs about kSharedCost + heads units
// (the shared loads and products, then each head's inverse and outputs), and the grid takes
// ceil(items / slots) rounds, slots the CTAs resident at once; the cheapest count wins, ties
// to more heads.
int prepare_heads_rule(const PlanShape& s, std::int64_t slots) {
  constexpr std::int64_t kSharedCost = 1;
  const int group = s.hk > 0 ? s.hv / s.hk : 0;
  if (group <= 0 || slots <= 0) return 1;
  const std::int64_t pairs = s.max_chunks * std::int64_t(s.hv);
  int best = 1;
  std::int64_t best_cost = -1;
  for (int heads = 1; heads <= kMaxPrepareHeads; ++heads) {
    if (group % heads != 0) continue;
    const std::int64_t items = pairs / heads;
    const std::int64_t cost = ((items + slots - 1) / slots) * (kSharedCost + heads);
    if (best_cost < 0 || cost <= best_cost) best = heads, best_cost = cost;
  }
  return best;
}

// ---- the first chunk-loop launch ------------------------------------------------------------

// CTAs of the first chunk-loop launch after the prepare kernel: the Output pass without CP
// (num_seqs x Hv x 128 / block_v), CP pass 1 with it (its working CTAs, estimated from the
// chunk count: every segment but each sequence's last, over the [M | N] columns, but only the
// N columns of a sequence's first segment).
std::int64_t first_loop_ctas(const KernelConfig& c, const PlanShape& s) {
  if (c.block_v <= 0) return 0;
  const std::int64_t vblocks = kStateCols / c.block_v;
  if (c.cp_segment_chunks <= 0) return s.num_seqs * s.hv * vblocks;
  const std::int64_t cp = c.cp_segment_chunks;
  const std::int64_t segments = (s.max_chunks + cp - 1) / cp;
  const std::int64_t non_last = segments > s.num_seqs ? segments - s.num_seqs : 0;
  // A sequence's first segment (when it is not also its last) runs only its N columns: at most
  // min(N, non_last) of the non-last segments are first ones.
  const std::int64_t firsts = std::min(non_last, s.num_seqs);
  return (2 * non_last - firsts) * s.hv * vblocks;
}

bool column_warps_64(const KernelConfig& c) {
  return c.pass == Pass::Forward && c.family == Family::Fused && c.roles == WarpRoles::ColumnWarps &&
         c.block_v == 64;
}

// The loop's CTA fits on an SM beside two prepare CTAs only at 64 columns (the 128-column one
// takes the whole register file). The rule: exclusive when the first loop launch has at most
// one CTA per two SMs (the prepare then keeps at least half of the SMs, at full occupancy) and
// its units (sequences, or CP segments) are kMinExclusiveUnitChunks chunks long or more
// (measured, docs/decisions/prepare-overlap.md: 5-19 % faster on the anchor rows of 64 to 512
// chunks per unit; on units of 32 chunks the prepare's head start dominates and 3 of 5 rows
// were 9-11 % slower, 16/16 and 16/32 equal, only 32/32 faster); shared up to one CTA per SM
// (then the loop alone leaves most of the GPU to the prepare; with more, the loop's CTAs past
// one per SM wait for the prepare grid to finish, and the prepare runs at half its
// occupancy); else after the prepare kernel. A pin: 0 never, 1 shared, 2 exclusive where the
// first launch leaves an SM to the prepare (else shared).
constexpr std::int64_t kMinExclusiveUnitChunks = 64;
OverlapMode overlap_mode(const KernelConfig& c, const PlanShape& s, const PlanDevice& d,
                         std::int64_t ctas, int pin) {
  if (!column_warps_64(c) || pin == 0) return OverlapMode::None;
  const bool fits_alone = ctas > 0 && ctas < d.sm_count;  // an SM left to the prepare
  if (pin == 1) return OverlapMode::Shared;
  if (pin == 2) return fits_alone ? OverlapMode::Exclusive : OverlapMode::Shared;
  // The loop's units: CP segments (cp chunks), else the sequences (their mean length: the
  // longest is not known here without a device copy).
  const std::int64_t seq_chunks = s.num_seqs > 0 ? s.max_chunks / s.num_seqs : 0;
  const std::int64_t unit_chunks = c.cp_segment_chunks > 0 && c.cp_segment_chunks < seq_chunks
                                       ? c.cp_segment_chunks
                                       : seq_chunks;
  if (ctas > 0 && 2 * ctas <= d.sm_count && unit_chunks >= kMinExclusiveUnitChunks)
    return OverlapMode::Exclusive;
  if (ctas > 0 && ctas <= d.sm_count) return OverlapMode::Shared;
  return OverlapMode::None;
}

// CP pass 1 runs each sequence's first segment as its output (the column-warp loop: its N
// columns' CTAs take the Output loop from h0 and leave the end state where pass 1 would; the
// main pass skips the segment). The Output loop takes longer per chunk than the transition
// loop, so the first segments' CTAs outlast the others when pass 1 is one wave: measured
// (docs/decisions/cp-first-segment-output.md) 9-23 % slower on every row
// whose pass 1 fits two CTAs per SM (240 or fewer working CTAs), and 1-2.7 % faster with 416
// (1x32768 at 4/16 and 16/16 in 64-chunk segments), where pass 1 takes a second wave anyway
// and the main pass, bound by DRAM bandwidth, loses a segment in eight. So: only past two
// pass-1 CTAs per SM.
bool first_segment_rule(const KernelConfig& c, const PlanDevice& d, std::int64_t ctas, int pin) {
  if (c.pass != Pass::Forward || c.family != Family::Fused || c.roles != WarpRoles::ColumnWarps ||
      c.cp_segment_chunks <= 0)
    return false;
  if (pin != GDN_PLAN_RULE) return pin == 1;
  return ctas > 2 * std::int64_t(d.sm_count);
}

// The prepare split around CP pass 1: the prepare kernel first runs only the chunks pass 1
// reads (every chunk before the sequence's last segment); the rest, the last segment's chunks,
// which only the main pass reads, run as a second prepare grid beside pass 1, on the room its
// last wave of CTAs leaves. It can run only where
//   - the loop is the 64-column column-warp loop (a 128-column CTA takes an SM's whole
//     register file: no prepare CTA fits beside it), with CP;
//   - the first loop launch follows the prepare kernel (overlap None: beside it, pass 1
//     already shares the SMs with the prepare grid);
//   - there is one sequence (its last segment is then one run of chunks at the table's end:
//     chunks (segments - 1) cp .. max_chunks - 1; a shorter real sequence only moves more of
//     its last segment into the first grid), of two segments or more.
// The rule also asks that pass 1's last wave of two CTAs per SM leave at least a third of the
// wave's slots free, where the tail's CTAs run beside it. Measured
// (docs/decisions/prepare-tail.md, every 1xT anchor row in the
// dispatch's variant): with 104 or 112 free slots of 264 (16/16 and 4/16 in 8- to 64-chunk
// segments) 1.4-5 % faster; with 184 (2/8 at 1x2048, 48 us) within 0.2 %; with 56 (2/8)
// within +-0.8 %; with 24 (8/24 in 16- and 32-chunk segments, a quarter of the prepare in the
// tail) 7-9 % slower.
constexpr int kTailMinFreeSlotsDivisor = 3;  // free slots >= wave / 3
std::int64_t prepare_split_rule(const KernelConfig& c, const PlanShape& s, const PlanDevice& d,
                                OverlapMode overlap, std::int64_t ctas, int pin) {
  const std::int64_t cp = c.cp_segment_chunks;
  const bool can = column_warps_64(c) && cp > 0 && overlap == OverlapMode::None &&
                   s.num_seqs == 1 && s.max_chunks > cp;
  if (!can || pin == 0) return 0;
  const std::int64_t tail_begin = (s.max_chunks + cp - 1) / cp * cp - cp;  // last segment's first
  if (pin == 1) return tail_begin;
  const std::int64_t wave = 2 * std::int64_t(d.sm_count);  // two 64-column loop CTAs per SM
  if (ctas <= 0) return 0;
  const std::int64_t free_slots = (ctas + wave - 1) / wave * wave - ctas;  // in the last wave
  return free_slots * kTailMinFreeSlotsDivisor >= wave ? tail_begin : 0;
}

// State columns per CP fix-up CTA: 8, 16 or 32 (one, two or four n8 tiles per warp). A step's
// time grows little with the width while the CTAs fit the SMs: the narrowest width whose CTAs
// (num_seqs x Hv x V / cols) fit the SMs, else 32.
int fixup_cols_rule(const PlanShape& s, const PlanDevice& d) {
  int cols = 8;
  while (cols < 32 && s.num_seqs * s.hv * (kStateCols / cols) > d.sm_count) cols *= 2;
  return cols;
}

// Value heads per local-gradient CTA (one CTA per SM): the most heads of a group whose CTAs
// (chunks x Hv / heads) still make kLocalMinWaves waves. A CTA walking more heads loads q and
// k once and writes dq, dk once (the whole group: in the output dtype, no group-sum launch),
// but the CTAs get fewer: with fewer than a few waves the last one idles SMs.
constexpr std::int64_t kLocalMinWaves = 4;
int local_heads_rule(const PlanShape& s, const PlanDevice& d) {
  const int group = s.hk > 0 ? s.hv / s.hk : 1;
  for (int heads = std::min(group, 8); heads > 1; --heads)
    if (group % heads == 0 && s.max_chunks * (s.hv / heads) >= kLocalMinWaves * d.sm_count) return heads;
  return 1;
}

// The forward recompute's CP segment length when the config has no CP. The recompute is the
// forward's 64-column column-warp loop (backward/bwd_run.cu), states only, after the prepare
// kernel (no overlap), two CTAs per SM; unsplit, its N x Hv x 2 CTAs each walk a whole
// sequence. The default selection's column-warp CP step, over those slots: CP when the CTAs
// busy along the longest chain (each sequence's weighted by its length over the longest's:
// Hv x 2 x total chunks / longest chunks) leave more than half of the slots idle and the
// longest sequence has kColumnWarpCpMinChunks chunks or more; then the longest segment of
// plan_values::kRecomputeCp whose CTAs over every sequence's segments fill 3/4 of the slots
// (about two per SM), else the shortest that splits. On 132 SMs: 16/32 heads at 1 x 32768
// tokens (64 CTAs) in 128-chunk segments (4 x 64 CTAs), 8/16 at 1 x 32768 in 64-chunk ones,
// 16/32 at 4 x 8192 (256 CTAs) unsplit. A model: the lab sweeps the pin ("rc") to measure it.
constexpr int kRecomputeCtasPerSm = 2;
constexpr int kRecomputeVBlocks = kStateCols / 64;
int recompute_cp_rule(const PlanShape& s, const PlanDevice& d) {
  if (s.num_seqs <= 0) return 0;
  const std::int64_t slots = kRecomputeCtasPerSm * std::int64_t(d.sm_count);
  const std::int64_t ctas_per_segment = std::int64_t(s.hv) * kRecomputeVBlocks;
  // Not known (packed sequences, no host copy, no hint): equal lengths.
  const std::int64_t longest = s.longest_chunks > 0 ? s.longest_chunks
                                                    : (s.max_chunks + s.num_seqs - 1) / s.num_seqs;
  if (longest < kColumnWarpCpMinChunks || 2 * ctas_per_segment * s.max_chunks >= slots * longest) return 0;
  return segment_filling_slots(plan_values::kRecomputeCp,
                               SegmentFill{s.num_seqs, longest, s.max_chunks, ctas_per_segment, slots});
}

int pin_of(const gdn_launch_options* pins, std::int32_t gdn_launch_options::*member) {
  return pins ? pins->*member : GDN_PLAN_RULE;
}

// The backward with CP whose reverse chain is the wgmma chain (column-warp roles, or the fused
// kernel's pass 1): the chain's pass 1 needs the prepare kernel's outputs but no recomputed
// state, and the recompute's state loop needs no pass-1 output, so they can run at once.
bool wgmma_chain_with_cp(const KernelConfig& c) {
  return c.pass == Pass::Backward && c.family == Family::Fused && c.cp_segment_chunks > 0 &&
         (c.roles == WarpRoles::ColumnWarps || c.roles == WarpRoles::ProducerConsumer);
}

// The reverse chain's CP pass 1 beside the forward recompute's state loop
// (docs/decisions/backward-pass1-beside-recompute.md): pass 1 launches first, one 211 KB CTA
// per SM, and lets the state loop launch at once; the loop's 106 KB CTAs take the SMs pass 1
// leaves, two each. Both are serial chains over a segment's chunks, so where both grids fit
// the GPU at once the pair takes the longer of the two instead of their sum; where they do
// not, the loop's later CTAs wait for SMs pass 1 holds. The rule keeps the order of the
// measured table (pass 1 after the recompute) until a sweep of the pin ("pb") on the H200
// measures where the overlap wins; the dispatch table carries the pin where it does.
bool pass1_beside_rule(const KernelConfig& c, int pin) {
  if (!wgmma_chain_with_cp(c)) return false;
  return pin == 1;
}

bool fused_backward_kernel(const KernelConfig& c) {
  return c.pass == Pass::Backward && c.family == Family::Fused && c.roles == WarpRoles::ProducerConsumer;
}

// The group sum beside the fused backward kernel (backward/group_sum_beside.cuh): the fused
// kernel publishes each chunk's dq and dk parts and a persistent grid sums them over the group
// on the SMs the kernel leaves, while they are in L2, instead of a launch that reads them back
// from HBM after it (0.26 ms of 4.2 at 16/32 heads, 1 x 32768 tokens on an H100; at 8/16 in
// 128-chunk segments the fused kernel's 64 CTAs leave 68 SMs idle, at the H100 sweep's fastest
// segment lengths mostly 4). Only with groups (Hv > Hk). The grid: four
// 256-thread CTAs per SM the fused CTAs (items x Hv, one per SM) leave, at least four (a fused
// grid of more CTAs than SMs launches it once its last CTAs run). The rule keeps the group-sum
// launch until a sweep of the pin ("gb") measures where the grid beside wins.
constexpr int kGroupSumCtasPerSm = 4;
int group_sum_grid(const KernelConfig& c, const PlanShape& s, const PlanDevice& d) {
  const std::int64_t cp = c.cp_segment_chunks;
  const std::int64_t items = cp > 0 ? std::max(s.num_seqs, (s.max_chunks + cp - 1) / cp) : s.num_seqs;
  const std::int64_t free_sms = std::max<std::int64_t>(1, d.sm_count - items * s.hv);
  return static_cast<int>(kGroupSumCtasPerSm * free_sms);
}


}  // namespace

PlanShape plan_shape(const gdn_problem& p) {
  PlanShape s;
  s.num_seqs = p.cu_seqlens ? p.num_seqs : p.B;
  s.max_chunks = p.cu_seqlens ? (p.T + (kChunkRows - 1) * p.num_seqs) / kChunkRows
                              : p.B * ((p.T + kChunkRows - 1) / kChunkRows);
  s.hv = p.Hv;
  s.hk = p.Hk;
  // The longest sequence: T without cu_seqlens; packed, from the host copy, else the hint,
  // else not known (0).
  std::int64_t longest = p.cu_seqlens ? p.max_seqlen_hint : p.T;
  if (p.cu_seqlens && p.cu_seqlens_host) {
    const auto offset = [&p](std::int64_t i) -> std::int64_t {
      return p.cu_seqlens_dtype == GDN_INT64 ? static_cast<const std::int64_t*>(p.cu_seqlens_host)[i]
                                             : static_cast<const std::int32_t*>(p.cu_seqlens_host)[i];
    };
    longest = 0;
    for (std::int64_t n = 0; n < p.num_seqs; ++n) longest = std::max(longest, offset(n + 1) - offset(n));
  }
  s.longest_chunks = (longest + kChunkRows - 1) / kChunkRows;
  return s;
}

ForwardPlan plan_forward(const KernelConfig& c, const PlanShape& s, const PlanDevice& d,
                         const gdn_launch_options* pins) {
  ForwardPlan plan;
  plan.cp_segment_chunks = c.cp_segment_chunks;
  plan.first_loop_ctas = c.family == Family::Fused ? first_loop_ctas(c, s) : 0;
  plan.prepare_overlap = overlap_mode(c, s, d, plan.first_loop_ctas,
                                      pin_of(pins, &gdn_launch_options::prepare_overlap));
  plan.prepare_split_chunk =
      prepare_split_rule(c, s, d, plan.prepare_overlap, plan.first_loop_ctas,
                         pin_of(pins, &gdn_launch_options::prepare_split));
  plan.first_segment_in_pass1 =
      first_segment_rule(c, d, plan.first_loop_ctas, pin_of(pins, &gdn_launch_options::cp_first_segment));
  // Resident prepare CTAs that work: four per SM alone; two per SM beside a loop CTA (shared);
  // four per SM on the SMs not reserved for the loop (exclusive).
  const std::int64_t sms = d.sm_count;
  const std::int64_t slots =
      plan.prepare_overlap == OverlapMode::Shared ? kPersistentCtasPerSm * sms
      : plan.prepare_overlap == OverlapMode::Exclusive
          ? kAloneCtasPerSm * std::max<std::int64_t>(1, sms - plan.first_loop_ctas)
          : kAloneCtasPerSm * sms;
  const int heads_pin = pin_of(pins, &gdn_launch_options::prepare_heads);
  plan.prepare_heads = heads_pin != GDN_PLAN_RULE ? heads_pin : prepare_heads_rule(s, slots);
  plan.tail_prepare_heads = heads_pin != GDN_PLAN_RULE
                                ? heads_pin
                                : prepare_heads_rule(s, kPersistentCtasPerSm * sms);
  if (c.cp_segment_chunks > 0 && c.family == Family::Fused) {
    const int fixup_pin = pin_of(pins, &gdn_launch_options::fixup_cols);
    plan.fixup_cols = fixup_pin != GDN_PLAN_RULE ? fixup_pin : fixup_cols_rule(s, d);
  }
  return plan;
}

BackwardPlan plan_backward(const KernelConfig& c, const PlanShape& s, const PlanDevice& d,
                           const gdn_launch_options* pins) {
  BackwardPlan plan;
  plan.cp_segment_chunks = c.cp_segment_chunks;
  plan.block_v = c.block_v;
  const int heads_pin = pin_of(pins, &gdn_launch_options::prepare_heads);
  plan.prepare_heads = heads_pin != GDN_PLAN_RULE
                           ? heads_pin
                           : prepare_heads_rule(s, kAloneCtasPerSm * std::int64_t(d.sm_count));
  // The chunked backward recomputes the forward's chunk states: in the config's segments when
  // it has CP, else in its own (the pin, or the rule).
  if (c.family == Family::Fused) {
    const int recompute_pin = pin_of(pins, &gdn_launch_options::recompute_cp_chunks);
    plan.recompute_cp_chunks = c.cp_segment_chunks > 0        ? c.cp_segment_chunks
                               : recompute_pin != GDN_PLAN_RULE ? recompute_pin
                                                                : recompute_cp_rule(s, d);
  }
  if (c.cp_segment_chunks > 0 || plan.recompute_cp_chunks > 0) {
    const int fixup_pin = pin_of(pins, &gdn_launch_options::fixup_cols);
    plan.fixup_cols = fixup_pin != GDN_PLAN_RULE ? fixup_pin : fixup_cols_rule(s, d);
  }
  const int local_pin = pin_of(pins, &gdn_launch_options::local_heads);
  plan.local_heads = local_pin != GDN_PLAN_RULE ? local_pin : local_heads_rule(s, d);
  plan.pass1_beside_recompute =
      pass1_beside_rule(c, pin_of(pins, &gdn_launch_options::pass1_beside_recompute));
  const bool groups = s.hk > 0 && s.hv > s.hk;
  plan.group_sum_beside = fused_backward_kernel(c) && groups &&
                          pin_of(pins, &gdn_launch_options::group_sum_beside) == 1;
  plan.group_sum_ctas = plan.group_sum_beside ? group_sum_grid(c, s, d) : 0;
  return plan;
}

bool parse_pins_suffix(std::string_view suffix, gdn_launch_options* out, std::string* error) {
  gdn_launch_options pins = kRulePins;
  std::size_t next_field = 0;  // tokens come in field order, each at most once
  while (!suffix.empty()) {
    if (suffix[0] != '+') {
      *error = "expected '+<field token><value>', got '" + std::string(suffix) + "'";
      return false;
    }
    suffix.remove_prefix(1);
    const std::size_t end = std::min(suffix.find('+'), suffix.size());
    const std::string_view item = suffix.substr(0, end);
    suffix.remove_prefix(end);
    std::size_t i = next_field;
    while (i < kPlanFields.size() && !item.starts_with(kPlanFields[i].token)) ++i;
    if (i == kPlanFields.size()) {
      std::string tokens;
      for (const PlanField& field : kPlanFields) tokens += (tokens.empty() ? "" : ", ") + std::string(field.token);
      *error = "'+" + std::string(item) + "' names no plan field after the ones before it (tokens, in order: " + tokens + ")";
      return false;
    }
    const PlanField& f = kPlanFields[i];
    const std::string_view digits = item.substr(f.token.size());
    int value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || !plan_field_takes(f, value)) {
      *error = std::string(f.name) + " ('+" + std::string(f.token) + "'): expected " +
               std::string(f.meaning) + ", got '" + std::string(digits) + "'";
      return false;
    }
    pins.*f.member = value;
    next_field = i + 1;
  }
  *out = pins;
  return true;
}

std::string check_launch_options(const gdn_launch_options& o, int group) {
  for (const PlanField& f : kPlanFields) {
    const int value = o.*f.member;
    if (value == GDN_PLAN_RULE) continue;
    if (!plan_field_takes(f, value))
      return std::string(f.name) + ": expected GDN_PLAN_RULE (-1) or " + std::string(f.meaning) +
             ", got " + std::to_string(value);
  }
  if (o.prepare_heads != GDN_PLAN_RULE && group > 0 && group % o.prepare_heads != 0)
    return "prepare_heads: expected a divisor of Hv / Hk = " + std::to_string(group) +
           " (the heads of a prepare CTA share one k head), got " + std::to_string(o.prepare_heads);
  if (o.local_heads != GDN_PLAN_RULE && group > 0 && group % o.local_heads != 0)
    return "local_heads: expected a divisor of Hv / Hk = " + std::to_string(group) +
           " (the heads of a local-gradient CTA share one q/k head), got " + std::to_string(o.local_heads);
  return "";
}

bool plan_field_applies(const KernelConfig& c, const PlanField& field) {
  const bool cw = c.pass == Pass::Forward && c.family == Family::Fused &&
                  c.roles == WarpRoles::ColumnWarps;
  const bool cp = c.cp_segment_chunks > 0;
  if (field.member == &gdn_launch_options::prepare_overlap) return column_warps_64(c);
  if (field.member == &gdn_launch_options::cp_first_segment) return cw && cp;
  if (field.member == &gdn_launch_options::prepare_split) return column_warps_64(c) && cp;
  if (field.member == &gdn_launch_options::prepare_heads) return true;  // every pass runs a prepare
  const bool chunked_backward = c.pass == Pass::Backward && c.family == Family::Fused;
  // The chunked backward without CP has a fix-up where its recompute runs CP.
  if (field.member == &gdn_launch_options::fixup_cols) return c.family == Family::Fused && (cp || chunked_backward);
  // The fused kernel (producer-consumer roles) has no local-gradient kernel: one value head
  // per CTA, dq and dk summed over the group afterwards.
  if (field.member == &gdn_launch_options::local_heads)
    return chunked_backward && c.roles != WarpRoles::ProducerConsumer;
  if (field.member == &gdn_launch_options::recompute_cp_chunks) return chunked_backward && !cp;
  if (field.member == &gdn_launch_options::pass1_beside_recompute) return wgmma_chain_with_cp(c);
  if (field.member == &gdn_launch_options::group_sum_beside) return fused_backward_kernel(c);
  return false;
}

int segment_filling_slots(std::span<const int> segments, const SegmentFill& f) {
  int best_filling = 0, shortest_splitting = 0;
  bool off_offered = false;
  for (int segment : segments) {  // ascending
    off_offered = off_offered || segment == 0;
    if (segment == 0 || segment >= f.longest_chunks) continue;  // would not split anything
    if (shortest_splitting == 0) shortest_splitting = segment;
    const std::int64_t segments_total = std::max(f.num_seqs, (f.total_chunks + segment - 1) / segment);
    if (4 * f.ctas_per_segment * segments_total >= 3 * f.slots) best_filling = segment;
  }
  if (best_filling != 0) return best_filling;
  if (shortest_splitting != 0) return shortest_splitting;
  return off_offered || segments.empty() ? 0 : segments.front();
}

}  // namespace gdn

extern "C" void gdn_launch_options_init(gdn_launch_options* o) {
  if (o != nullptr) *o = gdn::kRulePins;
}
