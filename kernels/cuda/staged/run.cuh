// Host orchestration of the staged family: workspace layout and the launch sequences of the
// forward and backward passes. No host synchronisation; every launch goes on the stream.
#pragma once

#include <cstddef>

#include "gdn/gdn.h"
#include "common/problem.cuh"
#include "gdn/launch_plan.hpp"

namespace gdn::staged {

// The device-side problem description of a validated problem (also used by the fused family).
Dims make_dims(const gdn_problem& p);

size_t fwd_workspace_bytes(const gdn_problem& p);
size_t bwd_workspace_bytes(const gdn_problem& p);

// Arguments are already validated; workspace holds at least *_workspace_bytes(p) bytes. The
// plan is the pass's plan (plan_forward / plan_backward) for the variant's config; sms the
// device's SM count it was made for.
gdn_status run_forward(const gdn_problem& p, const gdn_fwd_args& a, int block_v,
                       const ForwardPlan& plan, int sms, gdn_stream_t stream);
gdn_status run_backward(const gdn_problem& p, const gdn_bwd_args& a, const BackwardPlan& plan,
                        int sms, gdn_stream_t stream);

}  // namespace gdn::staged
