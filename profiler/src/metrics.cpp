// Metric-set definitions. Names validated against CUPTI 13.0 on GH100 (docs/benchmarking.md): the
// first eight fit one replay pass together; the SOL pair needs 8 and 5 passes alone.
#include "gdn/profiler/metrics.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace gdn::profiler {
namespace {

using enum Aggregation;

constexpr MetricDef duration{"duration_ns", "gpu__time_duration.sum", "Duration (profiled replay)", "ns", Sum};
constexpr MetricDef sm_clock{"sm_clock_hz", "gpc__cycles_elapsed.avg.per_second", "Clock achieved", "Hz", DurationWeightedMean};
constexpr MetricDef sm_busy{"sm_busy_pct", "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "SM busy", "%", DurationWeightedMean};
constexpr MetricDef occupancy{"achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved occupancy", "%", DurationWeightedMean};
constexpr MetricDef issue{"issue_active_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active", "Issue slots active", "%", DurationWeightedMean};
constexpr MetricDef dram{"dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput", "%", DurationWeightedMean};
constexpr MetricDef tensor{"tensor_pipe_pct", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "Tensor pipe active (incl. wgmma)", "%", DurationWeightedMean};
constexpr MetricDef wgmma{"wgmma_inst", "sm__inst_executed_pipe_tensor_op_gmma.sum", "wgmma instructions", "inst", Sum};
constexpr MetricDef sm_sol{"sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput (SOL)", "%", DurationWeightedMean};
constexpr MetricDef mem_sol{"memory_throughput_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "Memory throughput (SOL)", "%", DurationWeightedMean};

constexpr std::array basic_set{duration, sm_clock, sm_busy, occupancy, issue, dram, tensor, wgmma};
constexpr std::array full_set{duration, sm_clock, sm_busy, occupancy, issue, dram, tensor, wgmma, sm_sol, mem_sol};

// PM sampling has no per-kernel duration; the tensor counter there is the generic pipe.
constexpr std::array pm_set{
    MetricDef{"sm_busy_pct", "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "SM busy", "%", DurationWeightedMean},
    MetricDef{"achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active", "Achieved occupancy", "%", DurationWeightedMean},
    MetricDef{"dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput", "%", DurationWeightedMean},
    MetricDef{"tensor_pipe_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "Tensor pipe active", "%", DurationWeightedMean},
    MetricDef{"sm_clock_hz", "gpc__cycles_elapsed.avg.per_second", "Clock", "Hz", DurationWeightedMean},
};

}  // namespace

std::string_view to_string(MetricSet s) {
  switch (s) {
    case MetricSet::None: return "none";
    case MetricSet::Basic: return "basic";
    case MetricSet::Full: return "full";
  }
  return "unknown";
}

MetricSet parse_metric_set(std::string_view text) {
  if (text == "none") return MetricSet::None;
  if (text == "basic") return MetricSet::Basic;
  if (text == "full") return MetricSet::Full;
  throw std::invalid_argument("metric set: expected one of none|basic|full, got '" +
                              std::string(text) + "'");
}

std::span<const MetricDef> range_metrics(MetricSet s) {
  switch (s) {
    case MetricSet::None: return {};
    case MetricSet::Basic: return basic_set;
    case MetricSet::Full: return full_set;
  }
  return {};
}

std::span<const MetricDef> pm_sampling_metrics() { return pm_set; }

const MetricDef* find_metric(std::string_view key) {
  for (const MetricDef& d : full_set)
    if (d.key == key) return &d;
  for (const MetricDef& d : pm_set)
    if (d.key == key) return &d;
  return nullptr;
}

}  // namespace gdn::profiler
