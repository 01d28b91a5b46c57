// The counter metrics the lab records (Hopper names validated on the H200, docs/benchmarking.md).
// "SM utilization" is ambiguous, so busy %, throughput % and occupancy are separate keys.
#pragma once

#include <span>
#include <string_view>

namespace gdn::profiler {

enum class MetricSet {
  None,   // no profiling phase
  Basic,  // the one-pass default set
  Full,   // Basic + speed-of-light metrics (many more replay passes)
};
std::string_view to_string(MetricSet s);
// "none" | "basic" | "full"; throws std::invalid_argument listing the accepted names.
MetricSet parse_metric_set(std::string_view text);

// How per-kernel values combine into one value for the whole (multi-kernel) call.
enum class Aggregation {
  Sum,                   // extensive quantities: durations, instruction counts
  DurationWeightedMean,  // rates and percentages: sum(v_k * t_k) / sum(t_k), t_k = kernel duration
};

struct MetricDef {
  std::string_view key;         // stable DB column name, e.g. "sm_busy_pct"
  std::string_view cupti_name;  // CUPTI metric name
  std::string_view label;       // UI label
  std::string_view unit;        // "%", "ns", "Hz", "inst"
  Aggregation aggregation;
};

// Range-profiler metrics of a set, always starting with duration_ns (the weight of the means).
// MetricSet::None gives an empty span.
std::span<const MetricDef> range_metrics(MetricSet s);
// The single-pass PM sampling set (time series).
std::span<const MetricDef> pm_sampling_metrics();
// nullptr when no metric of any set has that key.
const MetricDef* find_metric(std::string_view key);

}  // namespace gdn::profiler
