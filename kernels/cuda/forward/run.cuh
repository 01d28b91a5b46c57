// Host orchestration of the fused family: workspace layout and the launch sequence of the
// forward pass (chunk table -> prepare (gamma, T; P and the exp gates for ColumnWarps) -> [CP: segment table -> pass 1 transfers ->
// fix-up] -> chunk loop). No host synchronisation; every launch goes on the stream.
#pragma once

#include <cstddef>

#include "gdn/gdn.h"
#include "gdn/variant_config.hpp"

namespace gdn::fused {

size_t fwd_workspace_bytes(const gdn_problem& p, const KernelConfig& c);

// Dynamic shared memory of the chunk loop for a V-block width and ring depth.
size_t chunk_loop_smem_bytes(int block_v, int stages);
// Dynamic shared memory of the producer/consumer chunk loop (2-deep ring).
size_t chunk_loop_pc_smem_bytes(int block_v);
// Dynamic shared memory of the column-warp chunk loop (2-deep ring); 0 for an uncompiled width.
size_t chunk_loop_cw_smem_bytes(int block_v);

// Arguments are already validated and c is implementable for p; the workspace holds at least
// fwd_workspace_bytes(p, c) bytes.
gdn_status run_forward(const gdn_problem& p, const gdn_fwd_args& a, const KernelConfig& c,
                       gdn_stream_t stream);

}  // namespace gdn::fused
