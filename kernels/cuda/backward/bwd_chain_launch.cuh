// Launch entry points of the chunked backward's kernels.
#pragma once

#include "bwd_params.cuh"
#include "bwd_run.cuh"

namespace gdn::bwd {

// items: sequences (no CP) or segments; the grid spans the gradient's V columns (in CP pass 1
// N's). roles: Cooperative (mma.sync chain) or ColumnWarps (wgmma chain).
cudaError_t launch_dstate_chain(const ChainParams& p, WarpRoles roles, int block_v,
                                int64_t items, cudaStream_t stream);

}  // namespace gdn::bwd
