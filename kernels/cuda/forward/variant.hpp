// The fused forward family as type-erased variants, and the configs this build compiles.
#pragma once

#include <memory>

#include "gdn/variant.hpp"

namespace gdn::fused {

// V-block widths with a compiled chunk loop: the cooperative and producer/consumer loops
// (fused_chunk_loop_v*.cu, fused_chunk_loop_pc_v*.cu) and the column-warp loop
// (fused_chunk_loop_cw_v*.cu: 16 columns per warp, 4 or 8 warps).
inline constexpr int kCompiledBlockV[] = {32, 64};
inline constexpr int kCompiledCwBlockV[] = {64, 128};

// The fused forward variants registered by default (GDN_VARIANTS=default): every variant the
// committed H200 dispatch table (kernels/tables/) names, so the default build dispatches
// through it, plus every variant the default rule can pick in the GDN_VARIANTS=all build (the
// rule takes the column-warp loop whenever one is implementable: 64 columns at any CP segment,
// 128 columns without CP), so shapes the table does not cover get the same variant in both
// builds. The producer/consumer and cooperative entries keep the other layouts in the default
// build: the rule's fallbacks where a build has no column-warp variant, the GPU tests' layout
// comparison (FusedRoles), and, last, the variant the smoke table of the tests names (exported
// from the bundled tests/data/smoke_h200.sqlite). A variant is a config, not a kernel: the list
// costs no compile time. tests/kernels/dispatch checks that the table's variants are all here,
// and tests/kernels/cuda/registry/test_default_list.cpp that the rule picks as in the all build.
constexpr KernelConfig two_stage(int block_v, WarpRoles roles, int cp_segment_chunks) {
  return {.family = Family::Fused, .block_v = block_v, .stages = 2, .roles = roles,
          .cp_segment_chunks = cp_segment_chunks};
}
inline constexpr WarpRoles kCoop = WarpRoles::Cooperative, kPc = WarpRoles::ProducerConsumer,
                           kCw = WarpRoles::ColumnWarps;
inline constexpr KernelConfig kDefaultFusedConfigs[] = {
    two_stage(64, kCw, 0), two_stage(64, kCw, 4), two_stage(64, kCw, 8), two_stage(64, kCw, 16),
    two_stage(64, kCw, 32), two_stage(64, kCw, 64), two_stage(64, kCw, 128), two_stage(64, kCw, 256),
    two_stage(128, kCw, 0),
    two_stage(32, kCoop, 0), two_stage(32, kCoop, 4), two_stage(32, kCoop, 8), two_stage(32, kCoop, 16),
    two_stage(32, kCoop, 32), two_stage(32, kCoop, 64), two_stage(32, kCoop, 128), two_stage(32, kCoop, 256),
    two_stage(32, kPc, 0), two_stage(32, kPc, 4), two_stage(32, kPc, 8), two_stage(32, kPc, 16),
    two_stage(32, kPc, 32), two_stage(32, kPc, 64), two_stage(32, kPc, 128), two_stage(32, kPc, 256),
    two_stage(64, kPc, 0), two_stage(64, kPc, 64), two_stage(64, kPc, 128), two_stage(64, kPc, 256),
    {.family = Family::Fused, .block_v = 32, .stages = 3},
};

consteval bool all_valid(std::span<const KernelConfig> configs) {
  for (const KernelConfig& c : configs)
    if (!check_config(c).ok || c.family != Family::Fused) return false;
  return true;
}
static_assert(all_valid(kDefaultFusedConfigs), "a default fused config fails check_config");

// Whether this build's fused chunk loop implements the config (check_config plus what is
// compiled: V-block widths, warp roles, chains per CTA, shared memory), with the reason when
// not. can_implement starts with it; GDN_VARIANTS=all registers every config it accepts.
// Visible from libgdn.so (a CPU test counts the full space with it).
__attribute__((visibility("default"))) Implementable fused_config_built(const KernelConfig& config);

// A fused variant of any config fused_config_built accepts, registered or not. Visible from
// libgdn.so: a GPU test compares a producer/consumer variant with its cooperative twin even in
// a build that registers only the former.
__attribute__((visibility("default"))) std::unique_ptr<Variant> make_fused_variant(
    const KernelConfig& config);

}  // namespace gdn::fused
