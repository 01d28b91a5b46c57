// Fallback timing: CUDA events around graph (or direct) launches, per sample.
#pragma once

#include <vector>

#include "call_runner.hpp"
#include "gdn/profiler/timing.hpp"
#include "l2_flusher.hpp"

namespace gdn::profiler::detail {

// Samples until the stop rule; each sample = (flush L2), event, graph_replays_per_sample
// calls, event; latency = elapsed / replays. Fills samples_ms, stop_reason and clock.
void time_with_events(const CallRunner& runner, const L2Flusher& flusher, const Protocol& p,
                      cudaStream_t stream, int device, Timing& out);

}  // namespace gdn::profiler::detail
