// Pure sample statistics and the stop rule.
#include "gdn/profiler/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gdn::profiler {

double quantile(std::span<const double> samples, double q) {
  if (samples.empty()) throw std::invalid_argument("quantile: samples must not be empty");
  if (!(q >= 0.0 && q <= 1.0))
    throw std::invalid_argument("quantile: q must be in [0, 1], got " + std::to_string(q));
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  // Type 7: position h = (n - 1) q between order statistics floor(h) and floor(h) + 1.
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Quantiles quantiles(std::span<const double> samples) {
  return {quantile(samples, 0.2), quantile(samples, 0.5), quantile(samples, 0.8)};
}

double relative_spread(std::span<const double> samples) {
  if (samples.size() < 2) return 0.0;
  const Quantiles q = quantiles(samples);
  if (q.p50 == 0.0) return std::numeric_limits<double>::infinity();
  return (q.p80 - q.p20) / q.p50;
}

std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::NotYet: return "not_yet";
    case StopReason::Converged: return "converged";
    case StopReason::MaxSamples: return "max_samples";
    case StopReason::TimeCap: return "time_cap";
  }
  return "unknown";
}

StopReason stop_decision(const Protocol& p, std::span<const double> samples, double elapsed_ms) {
  const auto n = static_cast<long long>(samples.size());
  if (n >= p.max_samples) return StopReason::MaxSamples;
  // The cap bounds a slow kernel's cost even below min_samples, but never yields zero samples.
  if (n >= 1 && elapsed_ms >= p.time_cap_ms) return StopReason::TimeCap;
  if (n < p.min_samples) return StopReason::NotYet;
  return relative_spread(samples) <= p.target_rel_spread ? StopReason::Converged
                                                         : StopReason::NotYet;
}

}  // namespace gdn::profiler
