// A fused KernelConfig with the fields the host-only rules read (warp roles, V-block width, CP
// segment length), for the tests of those rules (prepare overlap, CP first segment, prepare
// tail).
#pragma once

#include "gdn/variant_config.hpp"

namespace gdn::fused {

inline KernelConfig fused_config(WarpRoles roles, int block_v, int cp) {
  KernelConfig c;
  c.family = Family::Fused;
  c.roles = roles;
  c.block_v = block_v;
  c.cp_segment_chunks = cp;
  return c;
}

}  // namespace gdn::fused
