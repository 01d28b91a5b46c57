// Launch entry points of the chunked backward's kernels.
#pragma once

#include "bwd_params.cuh"
#include "bwd_run.cuh"

namespace gdn::bwd {

// items: sequences (no CP) or segments; state_cols: K (the gradient) or 2K (pass 1's [M | N]).
// roles: Cooperative (mma.sync chain) or ColumnWarps (wgmma chain).
cudaError_t launch_dstate_chain(const ChainParams& p, WarpRoles roles, int block_v,
                                int64_t items, int state_cols, cudaStream_t stream);

}  // namespace gdn::bwd
