// The fused forward family as type-erased variants, and the configs this build compiles.
#pragma once

#include <memory>

#include "gdn/variant.hpp"

namespace gdn::fused {

// V-block widths with a compiled chunk loop (fused_chunk_loop_v*.cu).
inline constexpr int kCompiledBlockV[] = {32, 64};

// The fused forward variants registered by default (GDN_VARIANTS=default): every variant the
// committed H200 dispatch table (kernels/tables/) names, so the default build dispatches
// through it, plus the non-CP twin of each (block_v, stages) pair, the 8-chunk segment and one
// 64-column loop: with these the default rule picks, for the shapes the table does not cover,
// what it picked in the GDN_VARIANTS=all build that ran the committed benchmark.
// tests/kernels/dispatch checks that the table's variants are all here.
inline constexpr KernelConfig kDefaultFusedConfigs[] = {
    {.family = Family::Fused, .block_v = 32, .stages = 2},
    {.family = Family::Fused, .block_v = 32, .stages = 2, .cp_segment_chunks = 8},
    {.family = Family::Fused, .block_v = 32, .stages = 2, .cp_segment_chunks = 16},
    {.family = Family::Fused, .block_v = 32, .stages = 2, .cp_segment_chunks = 32},
    {.family = Family::Fused, .block_v = 32, .stages = 2, .cp_segment_chunks = 64},
    {.family = Family::Fused, .block_v = 32, .stages = 2, .cp_segment_chunks = 128},
    {.family = Family::Fused, .block_v = 32, .stages = 2, .cp_segment_chunks = 256},
    {.family = Family::Fused, .block_v = 32, .stages = 3},
    {.family = Family::Fused, .block_v = 32, .stages = 3, .cp_segment_chunks = 16},
    {.family = Family::Fused, .block_v = 32, .stages = 3, .cp_segment_chunks = 32},
    {.family = Family::Fused, .block_v = 32, .stages = 3, .cp_segment_chunks = 64},
    {.family = Family::Fused, .block_v = 64, .stages = 2},
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

std::unique_ptr<Variant> make_fused_variant(const KernelConfig& config);

}  // namespace gdn::fused
