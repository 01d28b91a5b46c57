// Host orchestration of the staged family: workspace layout and the launch sequences of the
// forward and backward passes. No host synchronisation; every launch goes on the stream.
#pragma once

#include <cstddef>

#include "gdn/gdn.h"
#include "common/problem.cuh"

namespace gdn::staged {

// The device-side problem description of a validated problem (also used by the fused family).
Dims make_dims(const gdn_problem& p);

size_t fwd_workspace_bytes(const gdn_problem& p);
size_t bwd_workspace_bytes(const gdn_problem& p);

// Arguments are already validated; workspace holds at least *_workspace_bytes(p) bytes.
gdn_status run_forward(const gdn_problem& p, const gdn_fwd_args& a, int block_v,
                       gdn_stream_t stream);
gdn_status run_backward(const gdn_problem& p, const gdn_bwd_args& a, int block_v,
                        gdn_stream_t stream);

}  // namespace gdn::staged
