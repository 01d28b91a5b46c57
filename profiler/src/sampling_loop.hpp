// The batch loop shared by the CUPTI and the event timers: take samples in batches (a CUPTI
// flush or an event synchronisation per batch, not per sample) until the stop rule is met.
#pragma once

#include <functional>
#include <vector>

#include "gdn/profiler/protocol.hpp"
#include "gdn/profiler/stats.hpp"

namespace gdn::profiler::detail {

// Pure. Samples to take next: first one alone (measures the cost of a sample), then up to
// min_samples, then steps of 8; never beyond max_samples nor (by the measured cost per sample)
// past the time cap; at least 1.
int next_batch_size(const Protocol& p, int taken, double elapsed_ms, double ms_per_sample);

// Takes `n` samples and appends their latencies (ms). May append fewer (dropped records).
using TakeBatch = std::function<void(int n, std::vector<double>& samples)>;

// Runs batches until stop_decision says stop. A batch that yields no sample at all three times
// in a row stops the loop (StopReason::NotYet is returned then: the caller reports it).
StopReason run_sampling_loop(const Protocol& p, const TakeBatch& take, std::vector<double>& samples);

}  // namespace gdn::profiler::detail
