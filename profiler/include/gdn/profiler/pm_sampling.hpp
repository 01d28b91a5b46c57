// Optional PM-sampling timeline: a single-pass metric set sampled on a GPU-time interval while
// the call runs repeatedly. Shows phases (memory-bound, compute-bound, launch-bound) over time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gdn/profiler/launch.hpp"

namespace gdn::profiler {

struct PmSample {
  std::uint64_t t_ns = 0;         // start, relative to the first kept sample
  std::uint64_t duration_ns = 0;  // end - start of this sample
  std::vector<double> values;     // parallel to PmTimeline::metric_keys
};

struct PmTimeline {
  bool available = false;
  std::string unavailable_reason;
  std::uint64_t interval_ns = 0;
  std::vector<std::string> metric_keys;  // MetricDef::key of pm_sampling_metrics()
  std::vector<PmSample> samples;
  std::size_t trimmed_leading = 0;  // start-up samples removed (see count_startup_samples)
  bool overflow = false;            // the hardware buffer filled up: later samples are lost
};

struct PmOptions {
  std::uint64_t interval_ns = 100000;  // 100 us separated phases cleanly on the H200
  int calls = 20;                      // times the call is launched while sampling
  std::size_t max_samples = 4000;      // counter-data capacity
  std::size_t hardware_buffer_bytes = 256ull << 20;
};

// Throws std::invalid_argument naming the field on a bad option (interval 0, calls < 1, ...).
void validate(const PmOptions& o);

// Never throws for CUPTI trouble (returns available == false and the reason); throws
// MeasurementError if the call fails, std::invalid_argument for bad options.
PmTimeline sample_pm_timeline(const LaunchFn& launch, const PmOptions& options = {},
                              cudaStream_t stream = nullptr);

// Pure. Start/end GPU timestamps of raw samples -> how many leading samples are start-up
// artefacts: the first sample can span seconds (it starts when sampling is enabled). Leading
// samples longer than 1.5 x interval_ns, or of zero length, are dropped; the first regular
// sample ends the trim.
struct SampleSpan {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
};
std::size_t count_startup_samples(std::span<const SampleSpan> spans, std::uint64_t interval_ns);

}  // namespace gdn::profiler
