// One config struct per kernel family: the template parameter (C++20 structural aggregate,
// usable as a non-type template parameter), the database row (db/ stores each field in a
// typed column) and the source of the variant's name and registration
// (kernels/cuda/registry/registry.cpp). Derived quantities are constexpr functions of it.
#pragma once

#include <cstdint>
#include <string>

namespace gdn {

// How a forward variant is built.
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

struct KernelConfig {
  Family family = Family::Staged;
  int block_v = 64;            // V columns per CTA: 32 | 64 | 128
  int stages = 2;              // shared-memory ring depth: 2 | 3 (fused only)
  WarpRoles roles = WarpRoles::Cooperative;
  int consumer_regs = 0;       // setmaxnreg for math warpgroups; 0 = compiler default
  int cp_segment_chunks = 0;   // exact context parallelism: segment length in chunks, 0 = off
  int chains_per_cta = 1;      // independent (head or segment) chains interleaved per CTA

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
  if (c.block_v != 32 && c.block_v != 64 && c.block_v != 128)
    return {false, "block_v must be 32, 64 or 128"};
  if (c.stages != 2 && c.stages != 3) return {false, "stages must be 2 or 3"};
  if (c.cp_segment_chunks != 0 &&
      (!is_power_of_two(c.cp_segment_chunks) || c.cp_segment_chunks < 4 ||
       c.cp_segment_chunks > 256))
    return {false, "cp_segment_chunks must be 0 (off) or a power of two in [4, 256]"};
  if (c.chains_per_cta != 1 && c.chains_per_cta != 2)
    return {false, "chains_per_cta must be 1 or 2"};
  if (c.consumer_regs != 0 && (c.consumer_regs < 24 || c.consumer_regs > 256 ||
                               c.consumer_regs % 8 != 0))
    return {false, "consumer_regs must be 0 or a multiple of 8 in [24, 256]"};
  if (c.family == Family::Staged) {
    if (c.stages != 2 || c.roles != WarpRoles::Cooperative || c.consumer_regs != 0 ||
        c.chains_per_cta != 1)
      return {false, "the staged family has no ring, roles, register split or chain knobs"};
  }
  if (c.family == Family::Fused) {
    if (c.roles != WarpRoles::ProducerConsumer && c.consumer_regs != 0)
      return {false, "setmaxnreg needs the producer/consumer warp roles"};
  }
  return {true, ""};
}

// Deterministic procedural name: file names, filters, NVTX ranges, CLI, DB column.
// e.g. gdn_fwd_sm90_staged_v64_cp0, gdn_fwd_sm90_fused_v64_s2_pc_r232_cp16_x2
std::string config_name(const KernelConfig& c);

}  // namespace gdn
