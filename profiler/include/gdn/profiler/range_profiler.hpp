// Profiling phase: CUPTI range profiler, AutoRange (one range per kernel) + KernelReplay
// (CUPTI replays each kernel once per pass, saving and restoring memory). Durations measured
// here are replay durations, not latencies: take latencies from time_kernel.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gdn/profiler/launch.hpp"
#include "gdn/profiler/metrics.hpp"

namespace gdn::profiler {

struct MetricValue {
  std::string key;                 // MetricDef::key
  std::optional<double> value;     // nullopt when unavailable
  // Why value is empty; or, with a value, a note starting "partial:" (some kernels lacked it).
  std::string unavailable_reason;
};

// One auto range = one kernel launch of the call, in launch order.
struct KernelMetrics {
  std::string range_name;                    // CUPTI's range name (kernel name)
  std::vector<std::optional<double>> values;  // parallel to range_metrics(set)
};

struct MetricsResult {
  MetricSet set = MetricSet::None;
  bool available = false;          // false: nothing was measured, see unavailable_reason
  std::string unavailable_reason;  // e.g. "built without CUPTI", CUPTI error name + message
  std::vector<MetricValue> values;  // aggregated over the call, parallel to range_metrics(set)
  std::vector<KernelMetrics> kernels;
  std::size_t passes = 0;           // replay passes CUPTI needed per kernel
  std::size_t ranges_dropped = 0;   // kernels beyond max_kernels (not in the aggregate)

  // nullopt when the key is unknown or its value unavailable.
  std::optional<double> value(std::string_view key) const;
};

struct ProfileOptions {
  std::size_t max_kernels = 64;  // counter-data ranges reserved: kernels of one call at most
};

// Profiles one call of `launch` on the current device. Never throws for CUPTI trouble
// (insufficient privileges, another profiler attached, unsupported device, unknown metric):
// returns available == false or per-metric reasons. Throws MeasurementError if the call
// itself fails. stream = nullptr: a private non-blocking stream.
MetricsResult profile_metrics(const LaunchFn& launch, MetricSet set,
                              const ProfileOptions& options = {}, cudaStream_t stream = nullptr);

// Pure: combines per-kernel values into one per metric (see Aggregation). A metric missing in
// some kernel is still aggregated over the kernels that have it, with a reason noting how
// many lacked it; missing in all: nullopt with reason. Throws std::invalid_argument when a
// kernel's value count differs from defs.size() or defs[0] is not duration_ns.
std::vector<MetricValue> aggregate_kernel_metrics(std::span<const MetricDef> defs,
                                                  std::span<const KernelMetrics> kernels);

}  // namespace gdn::profiler
