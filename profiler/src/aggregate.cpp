// Per-kernel range-profiler values -> one value per metric for the whole call.
#include <stdexcept>
#include <string>

#include "gdn/profiler/range_profiler.hpp"

namespace gdn::profiler {

std::vector<MetricValue> aggregate_kernel_metrics(std::span<const MetricDef> defs,
                                                  std::span<const KernelMetrics> kernels) {
  if (defs.empty()) return {};
  if (defs[0].key != "duration_ns")
    throw std::invalid_argument("aggregate_kernel_metrics: defs[0] must be duration_ns (the weight), got " +
                                std::string(defs[0].key));
  for (std::size_t k = 0; k < kernels.size(); ++k)
    if (kernels[k].values.size() != defs.size())
      throw std::invalid_argument("aggregate_kernel_metrics: kernel " + std::to_string(k) + " has " +
                                  std::to_string(kernels[k].values.size()) + " values, expected " +
                                  std::to_string(defs.size()));

  std::vector<MetricValue> out;
  out.reserve(defs.size());
  for (std::size_t m = 0; m < defs.size(); ++m) {
    MetricValue mv{std::string(defs[m].key), std::nullopt, ""};
    double sum = 0.0, weighted = 0.0, weight = 0.0;
    std::size_t have = 0, unweighted = 0;
    for (const KernelMetrics& k : kernels) {
      if (!k.values[m]) continue;
      ++have;
      const double v = *k.values[m];
      sum += v;
      const std::optional<double>& t = k.values[0];
      if (t && *t > 0.0) {
        weighted += v * *t;
        weight += *t;
      } else {
        ++unweighted;
      }
    }
    if (have == 0) {
      mv.unavailable_reason = kernels.empty() ? "no kernel was profiled"
                                              : "no kernel reported this metric";
    } else if (defs[m].aggregation == Aggregation::Sum) {
      mv.value = sum;
    } else if (weight > 0.0) {
      mv.value = weighted / weight;
      if (unweighted > 0) mv.unavailable_reason = "partial: " + std::to_string(unweighted) +
                                                  " kernel(s) without a duration left out of the mean";
    } else {
      mv.value = sum / static_cast<double>(have);  // no durations at all: plain mean, said so
      mv.unavailable_reason = "partial: no kernel durations, plain mean";
    }
    if (mv.value && have < kernels.size() && mv.unavailable_reason.empty())
      mv.unavailable_reason = "partial: " + std::to_string(kernels.size() - have) + " of " +
                              std::to_string(kernels.size()) + " kernel(s) lacked this metric";
    out.push_back(std::move(mv));
  }
  return out;
}

std::optional<double> MetricsResult::value(std::string_view key) const {
  for (const MetricValue& v : values)
    if (v.key == key) return v.value;
  return std::nullopt;
}

}  // namespace gdn::profiler
