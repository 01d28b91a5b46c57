// The launch plan: every shape-dependent launch decision of one call, as data. One pure
// function per pass computes it from (config, problem, device) and the pins of the call
// (gdn_launch_options: the dispatch table's entry, then the caller's). The kernels execute a
// plan and read nothing else (no environment, no files); the lab sweeps the pins as
// dimensions beside the config's and records the plan of every result; the dispatch table
// carries the winning pins. Host-only and pure, so every rule is tested without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gdn/gdn.h"
#include "gdn/variant_config.hpp"

namespace gdn {

// What a plan reads of a problem: host-side facts only (dispatch never copies cu_seqlens).
struct PlanShape {
  std::int64_t num_seqs = 0;    // N (B without cu_seqlens)
  std::int64_t max_chunks = 0;  // size of the chunk table: a bound on the chunks of all sequences
  int hv = 0;
  int hk = 0;
  // Chunks of the longest sequence: T's without cu_seqlens; packed, from the host copy of
  // cu_seqlens, else the caller's max_seqlen_hint. 0: not known.
  std::int64_t longest_chunks = 0;
};
// Of a validated problem.
PlanShape plan_shape(const gdn_problem& p);

// What a plan reads of the device.
struct PlanDevice {
  int sm_count = 132;
};

// How the fused forward's first chunk loop runs against the prepare kernel:
//   None:      after it has completed;
//   Shared:    beside it (its programmatic dependent, polling per-chunk ready counts), on SMs
//              shared with a persistent prepare grid of two CTAs per SM;
//   Exclusive: beside it, the prepare grid leaving as many SMs as the loop has CTAs, the
//              loop's CTAs (padded past half an SM's shared memory) taking those one each.
enum class OverlapMode : std::uint8_t { None = 0, Shared = 1, Exclusive = 2 };

struct ForwardPlan {
  int cp_segment_chunks = 0;  // CP segment length in chunks (the config's; 0: no CP)
  OverlapMode prepare_overlap = OverlapMode::None;
  bool first_segment_in_pass1 = false;  // CP pass 1 runs each first segment as its output
  std::int64_t prepare_split_chunk = 0; // first chunk of the tail prepare grid; 0: no split
  int prepare_heads = 1;       // v-heads per CTA of the (first) prepare grid
  int tail_prepare_heads = 1;  // v-heads per CTA of the tail prepare grid (beside CP pass 1)
  int fixup_cols = 0;          // state columns per CP fix-up CTA (8, 16, 32); 0 without CP
  std::int64_t first_loop_ctas = 0;  // CTAs of the first chunk-loop launch (SMs reserved when
                                     // the overlap is exclusive)
  friend bool operator==(const ForwardPlan&, const ForwardPlan&) = default;
};

// The backward's decisions. The staged backward runs the forward recurrence (its prepare
// kernel) and then the reverse pass in block_v-column V-blocks; a new backward family adds its
// fields here and computes them in plan_backward.
struct BackwardPlan {
  int cp_segment_chunks = 0;  // CP segment length in chunks (0: one chain per sequence)
  int block_v = 64;           // V-block width of the reverse pass
  int prepare_heads = 1;      // v-heads per CTA of the recurrence's prepare grid
  int fixup_cols = 0;         // state columns per CP fix-up CTA (8, 16, 32), both fix-ups (the
                              // forward recompute's and the reverse chain's); 0 without CP
  int local_heads = 1;        // v-heads (of one q/k head) one local-gradient CTA walks; the
                              // group (Hv / Hk): dq, dk summed on chip, no group-sum launch
  int recompute_cp_chunks = 0;  // CP segment length of the forward recompute (0: none): the
                                // config's when it has CP (one segment table for both), else
                                // its own; the reverse chain runs the config's either way
  bool pass1_beside_recompute = false;  // CP, the wgmma chain (column-warp or fused kernel):
                                        // the chain's pass 1 launches first and the
                                        // recompute's state loop beside it
  bool group_sum_beside = false;  // the fused kernel, Hv > Hk: dq, dk summed over the group by
                                  // a grid beside it instead of a launch after it
  int group_sum_ctas = 0;         // that grid's CTAs (0 when there is none)
  friend bool operator==(const BackwardPlan&, const BackwardPlan&) = default;
};

// pins: nullptr or a validated gdn_launch_options (check_launch_options); a pinned field is
// applied wherever the config runs that mechanism.
ForwardPlan plan_forward(const KernelConfig& c, const PlanShape& s, const PlanDevice& d,
                         const gdn_launch_options* pins = nullptr);
BackwardPlan plan_backward(const KernelConfig& c, const PlanShape& s, const PlanDevice& d,
                           const gdn_launch_options* pins = nullptr);

// ---- pins --------------------------------------------------------------------------------

inline constexpr gdn_launch_options kRulePins{GDN_PLAN_RULE, GDN_PLAN_RULE, GDN_PLAN_RULE,
                                              GDN_PLAN_RULE, GDN_PLAN_RULE, GDN_PLAN_RULE,
                                              GDN_PLAN_RULE, GDN_PLAN_RULE, GDN_PLAN_RULE};
static_assert(sizeof(gdn_launch_options) == 9 * sizeof(std::int32_t),
              "kRulePins and kPlanFields list every field of gdn_launch_options");

// The pinnable fields, in gdn_launch_options order: the lab's plan dimensions, the database's
// plan columns and the dispatch table's plan object all iterate this list.
struct PlanField {
  std::string_view name;   // the C field's name: "prepare_overlap"
  std::string_view token;  // in candidate names: "ov" (gdn_fwd_..._cp16+ov2)
  std::int32_t gdn_launch_options::*member;
  std::span<const int> values;  // the values the field takes (besides GDN_PLAN_RULE)
  std::string_view meaning;     // of the values, for error messages and `gdnlab space`
};
namespace plan_values {
inline constexpr int kOverlap[] = {0, 1, 2};
inline constexpr int kOnOff[] = {0, 1};
inline constexpr int kHeads[] = {1, 2, 3, 4, 5, 6, 7, 8};
inline constexpr int kFixupCols[] = {8, 16, 32};
inline constexpr int kRecomputeCp[] = {0, 16, 32, 64, 128};  // ascending: [1] is the shortest
}  // namespace plan_values
inline constexpr std::array<PlanField, 9> kPlanFields{{
    {"prepare_overlap", "ov", &gdn_launch_options::prepare_overlap, plan_values::kOverlap,
     "0 (after the prepare kernel), 1 (shared SMs) or 2 (SMs of its own)"},
    {"cp_first_segment", "fs", &gdn_launch_options::cp_first_segment, plan_values::kOnOff,
     "0 or 1 (CP pass 1 runs each first segment's output)"},
    {"prepare_split", "ps", &gdn_launch_options::prepare_split, plan_values::kOnOff,
     "0 or 1 (the last segment's prepare beside CP pass 1)"},
    {"prepare_heads", "ph", &gdn_launch_options::prepare_heads, plan_values::kHeads,
     "1 to 8, a divisor of Hv / Hk (value heads per prepare CTA)"},
    {"fixup_cols", "fx", &gdn_launch_options::fixup_cols, plan_values::kFixupCols,
     "8, 16 or 32 (state columns per fix-up CTA)"},
    {"local_heads", "lh", &gdn_launch_options::local_heads, plan_values::kHeads,
     "1 to 8, a divisor of Hv / Hk (value heads per local-gradient CTA of the backward)"},
    {"recompute_cp_chunks", "rc", &gdn_launch_options::recompute_cp_chunks, plan_values::kRecomputeCp,
     "0 (no CP), 16, 32, 64 or 128 (chunks per segment of the backward's forward recompute)"},
    {"pass1_beside_recompute", "pb", &gdn_launch_options::pass1_beside_recompute, plan_values::kOnOff,
     "0 or 1 (the backward's CP pass 1 before the forward recompute's state loop, beside it)"},
    {"group_sum_beside", "gb", &gdn_launch_options::group_sum_beside, plan_values::kOnOff,
     "0 or 1 (the fused backward's group sum beside it)"},
}};
// The field of that name (or, with tokens, of that token: "pb"); nullptr when none. Inline:
// the lab's database library, which does not link the kernels, names fields too.
inline const PlanField* find_plan_field(std::string_view name, bool tokens = false) {
  for (const PlanField& f : kPlanFields)
    if (!name.empty() && (f.name == name || (tokens && f.token == name))) return &f;
  return nullptr;
}
// Whether the field takes the value (GDN_PLAN_RULE aside).
inline bool plan_field_takes(const PlanField& f, int value) {
  for (const int v : f.values)
    if (v == value) return true;
  return false;
}

inline bool same_pins(const gdn_launch_options& a, const gdn_launch_options& b) {
  for (const PlanField& f : kPlanFields)
    if (a.*f.member != b.*f.member) return false;
  return true;
}
inline bool all_rule(const gdn_launch_options& o) { return same_pins(o, kRulePins); }

// "" when every field is GDN_PLAN_RULE, else "+ov2+ph4" (tokens in field order): appended to a
// variant's name, it names one candidate of a sweep (distinct pins, distinct names).
inline std::string pins_suffix(const gdn_launch_options& o) {
  std::string out;
  for (const PlanField& f : kPlanFields)
    if (o.*f.member != GDN_PLAN_RULE)
      out += "+" + std::string(f.token) + std::to_string(o.*f.member);
  return out;
}
// The inverse: the pins of a suffix ("" gives kRulePins); false with *error set when a token
// is unknown, repeated, out of order or has a value the field does not take.
bool parse_pins_suffix(std::string_view suffix, gdn_launch_options* out, std::string* error);

// "" when o is acceptable for a problem whose value heads come in groups of `group` (Hv / Hk;
// 0: not known), else a message naming the field, what it takes and the value given.
std::string check_launch_options(const gdn_launch_options& o, int group);

// Whether pinning `field` can change what config c launches (the mechanism exists in it for
// some problem): the lab sweeps only these.
bool plan_field_applies(const KernelConfig& c, const PlanField& field);

// ---- CP segment lengths ------------------------------------------------------------------
// Shared by the default variant selection (which picks a config's cp_segment_chunks) and the
// backward plan (which picks its forward recompute's): one chunk loop in exact CP segments.

// A column-warp loop splits no sequence shorter than this many chunks (the default selection's
// column-warp CP step, fitted to a forward anchor sweep: shorter ones mostly ran best unsplit).
inline constexpr std::int64_t kColumnWarpCpMinChunks = 64;

struct SegmentFill {
  std::int64_t num_seqs = 0;          // N
  std::int64_t longest_chunks = 0;    // of the longest sequence
  std::int64_t total_chunks = 0;      // of all sequences
  std::int64_t ctas_per_segment = 0;  // the loop's CTAs per segment: Hv x V-blocks
  std::int64_t slots = 0;             // CTAs resident at once
};
// Among `segments` (ascending; 0: CP off): the longest segment whose CTAs, over every
// sequence's segments (max(N, ceil(total chunks / segment))), fill 3/4 of the slots; else the
// shortest that splits the longest sequence; else 0 when offered, else the first.
int segment_filling_slots(std::span<const int> segments, const SegmentFill& f);

}  // namespace gdn
