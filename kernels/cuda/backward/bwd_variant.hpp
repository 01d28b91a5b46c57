// The chunked backward family as type-erased variants (Pass::Backward, Family::Fused).
#pragma once

#include <memory>
#include <span>

#include "gdn/variant.hpp"

namespace gdn::bwd {

// The backward configs this build registers: the reverse chain's V-block (16 or 32 columns:
// 16 doubles its CTAs, for rows whose chains leave SMs idle at 32) and the CP segment length of
// the forward recompute and of the reverse chain (0: off).
constexpr KernelConfig backward_config(int block_v, int cp_segment_chunks) {
  return {.pass = Pass::Backward, .family = Family::Fused, .block_v = block_v, .stages = 2,
          .roles = WarpRoles::Cooperative, .cp_segment_chunks = cp_segment_chunks};
}
inline constexpr KernelConfig kBackwardConfigs[] = {
    backward_config(16, 0),  backward_config(16, 16), backward_config(16, 64),
    backward_config(32, 0),  backward_config(32, 8),  backward_config(32, 16),
    backward_config(32, 32), backward_config(32, 64), backward_config(32, 128),
};

// Whether the chunked backward implements the config, with the reason when not.
Implementable backward_config_built(const KernelConfig& config);
std::unique_ptr<Variant> make_backward_variant(const KernelConfig& config);

}  // namespace gdn::bwd
