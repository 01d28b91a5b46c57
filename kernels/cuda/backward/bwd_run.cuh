// Workspace and launch sequence of the chunked backward family (see bwd_params.cuh).
#pragma once

#include "gdn/gdn.h"
#include "gdn/variant_config.hpp"

namespace gdn::bwd {

// V-block widths of the reverse chain: 32 columns (at 64, its dS, the prefetched inputs and the
// products' fragments exceed the 255 registers a thread can have and spill).
inline constexpr int kChainBlockV[] = {16, 32};

size_t bwd_workspace_bytes(const gdn_problem& p, const KernelConfig& c);
// Arguments are validated by the caller; a.workspace holds bwd_workspace_bytes(p, c) bytes.
gdn_status run_backward(const gdn_problem& p, const gdn_bwd_args& a, const KernelConfig& c,
                        gdn_stream_t stream);

const void* chain_symbol(int block_v, bool bf16);
size_t chain_smem_bytes(int block_v);

}  // namespace gdn::bwd
