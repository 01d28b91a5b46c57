// Workspace and launch sequence of the chunked backward family (see bwd_params.cuh).
#pragma once

#include "gdn/gdn.h"
#include "gdn/variant_config.hpp"

namespace gdn::bwd {

// V-block widths of the reverse chain. Cooperative roles (4 warps, mma.sync): 16 and 32
// columns (at 64, its dS, the prefetched inputs and the products' fragments exceed the 255
// registers a thread can have and spill). Column-warp roles (a wgmma warpgroup fed by a TMA
// producer warp): 64 (m64n64 products on one 128-byte swizzle atom per operand row; dS is two
// m64 accumulators).
inline constexpr int kChainBlockV[] = {16, 32};
inline constexpr int kChainWgBV = 64;
inline constexpr int kChainWgBlockV[] = {kChainWgBV};
// Producer-consumer roles: the fused kernel (fused_bwd.cuh), all 128 columns per CTA. Its CP
// pass 1 runs the column-warp chain.
inline constexpr int kFusedBV = 128;

size_t bwd_workspace_bytes(const gdn_problem& p, const KernelConfig& c);
// Arguments are validated by the caller; a.workspace holds bwd_workspace_bytes(p, c) bytes.
gdn_status run_backward(const gdn_problem& p, const gdn_bwd_args& a, const KernelConfig& c,
                        gdn_stream_t stream);

// The reverse chain kernel of (roles, block_v) (producer-consumer roles: the fused kernel),
// its shared memory and threads per CTA (nullptr / 0 where it is not compiled).
const void* chain_symbol(WarpRoles roles, int block_v, bool bf16);
size_t chain_smem_bytes(WarpRoles roles, int block_v);
int chain_threads(WarpRoles roles);

}  // namespace gdn::bwd
