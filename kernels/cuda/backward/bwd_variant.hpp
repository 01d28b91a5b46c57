// The chunked backward family as type-erased variants (Pass::Backward, Family::Fused).
#pragma once

#include <memory>
#include <span>

#include "gdn/variant.hpp"

namespace gdn::bwd {

// The backward configs this build registers: the reverse chain's roles (cooperative: 4 warps
// on mma.sync, 16 or 32 columns: 16 doubles its CTAs, for rows whose chains leave SMs idle at
// 32; column warps: a wgmma warpgroup fed by a TMA producer warp, 64 columns; producer-consumer:
// the fused kernel, the chain and the local gradients of all 128 columns in one CTA per
// (sequence or segment, v-head), fused_bwd.cuh) and the CP segment length of the forward
// recompute and of the reverse chain (0: off).
constexpr KernelConfig backward_config(int block_v, int cp_segment_chunks,
                                       WarpRoles roles = WarpRoles::Cooperative) {
  return {.pass = Pass::Backward, .family = Family::Fused, .block_v = block_v, .stages = 2,
          .roles = roles, .cp_segment_chunks = cp_segment_chunks};
}
constexpr WarpRoles kWg = WarpRoles::ColumnWarps;
constexpr WarpRoles kPc = WarpRoles::ProducerConsumer;
inline constexpr KernelConfig kBackwardConfigs[] = {
    backward_config(16, 0),        backward_config(16, 16),       backward_config(16, 64),
    backward_config(32, 0),        backward_config(32, 8),        backward_config(32, 16),
    backward_config(32, 32),       backward_config(32, 64),       backward_config(32, 128),
    backward_config(64, 0, kWg),   backward_config(64, 8, kWg),   backward_config(64, 16, kWg),
    backward_config(64, 32, kWg),  backward_config(64, 64, kWg),  backward_config(64, 128, kWg),
    backward_config(128, 0, kPc),  backward_config(128, 8, kPc),  backward_config(128, 16, kPc),
    backward_config(128, 32, kPc), backward_config(128, 64, kPc), backward_config(128, 128, kPc),
};

// Whether the chunked backward implements the config, with the reason when not.
Implementable backward_config_built(const KernelConfig& config);
std::unique_ptr<Variant> make_backward_variant(const KernelConfig& config);

}  // namespace gdn::bwd
