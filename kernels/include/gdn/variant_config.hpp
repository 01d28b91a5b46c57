// One config struct per kernel family: the template parameter (C++20 structural aggregate,
// usable as a non-type template parameter), the database row (db/ stores each field in a
// typed column) and the source of the variant's name and registration
// (kernels/cuda/registry/registry.cpp). Derived quantities are constexpr functions of it.
#pragma once

#include <cstdint>
#include <string>

namespace gdn {

// Which pass a variant computes: the config carries it, so a backward variant's name, database
// row and dispatch-table entries come from its own config (gdn_bwd_...), never from a forward
// name.
enum class Pass : std::uint8_t { Forward = 0, Backward = 1 };

// How a variant is built.
//  Staged: the multi-kernel decomposition (chunk cumsum, gate-free inverse, state recurrence,
//          output), each a separate launch; the correctness baseline.
//  Fused:  one CTA per (sequence or segment, v-head, V-block) loops over chunks, state in
//          registers, a cp.async ring, in one of three warp layouts (mma.sync products in
//          the cooperative and producer/consumer layouts, wgmma in the column-warp one).
enum class Family : std::uint8_t { Staged = 0, Fused = 1 };

// Warp-role layouts of the fused family.
//  Cooperative:      every warpgroup does every matrix product of a chunk.
//  ProducerConsumer: a chain warpgroup runs the recurrence (and streams the chunks in) while
//                    an output warpgroup computes the previous chunk's output.
//  ColumnWarps:      every warp owns 16 value columns and runs the whole chunk step for them
//                    (recurrence and output) on a transposed state in registers, a warpgroup's
//                    64 columns being the M = 64 rows of its wgmma products; warpgroups share
//                    only the shared-memory ring, no barrier between them inside a chunk.
enum class WarpRoles : std::uint8_t { Cooperative = 0, ProducerConsumer = 1, ColumnWarps = 2 };

// What is compiled per variant. The launch decisions that depend on the problem (prepare
// overlap, fix-up width, ...) are not here: they are fields of the launch plan
// (gdn/launch_plan.hpp), computed per call.
struct KernelConfig {
  Pass pass = Pass::Forward;
  Family family = Family::Staged;
  int block_v = 64;            // V columns per CTA: 32 | 64 | 128 (16: the chunked backward)
  int stages = 2;              // shared-memory ring depth: 2 | 3 (fused only)
  WarpRoles roles = WarpRoles::Cooperative;
  int cp_segment_chunks = 0;   // exact context parallelism: segment length in chunks, 0 = off

  friend constexpr bool operator==(const KernelConfig&, const KernelConfig&) = default;
};

inline constexpr int kChunk = 64;  // chunk length of every kernel (docs/spec.md section 2)

struct ConfigCheck {
  bool ok;
  const char* reason;  // static string; "" when ok
};

constexpr bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

// The one validity predicate. Used by static_assert in kernels, by the generator before
// instantiation, and by can_implement at run time (which adds problem-dependent checks).
constexpr ConfigCheck check_config(const KernelConfig& c) {
  // 16 columns only for the chunked backward, whose reverse chain is its only V-blocked kernel.
  const bool chain_16 = c.pass == Pass::Backward && c.family == Family::Fused && c.block_v == 16;
  if (!chain_16 && c.block_v != 32 && c.block_v != 64 && c.block_v != 128)
    return {false, "block_v must be 32, 64 or 128 (16: the chunked backward only)"};
  if (c.stages != 2 && c.stages != 3) return {false, "stages must be 2 or 3"};
  if (c.cp_segment_chunks != 0 &&
      (!is_power_of_two(c.cp_segment_chunks) || c.cp_segment_chunks < 4 ||
       c.cp_segment_chunks > 256))
    return {false, "cp_segment_chunks must be 0 (off) or a power of two in [4, 256]"};
  if (c.family == Family::Staged) {
    if (c.stages != 2 || c.roles != WarpRoles::Cooperative)
      return {false, "the staged family has no ring or warp-role knobs"};
  }
  return {true, ""};
}

// Deterministic procedural name: file names, filters, NVTX ranges, CLI, DB column.
// e.g. gdn_fwd_sm90_staged_v64_cp0, gdn_bwd_sm90_staged_v64_cp0, gdn_fwd_sm90_fused_v64_s2_cw_cp16
std::string config_name(const KernelConfig& c);

}  // namespace gdn
