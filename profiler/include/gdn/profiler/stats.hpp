// Pure sample statistics and the stop rule of the timing loop (no CUDA: unit-tested on CPU).
#pragma once

#include <span>
#include <string_view>

#include "gdn/profiler/protocol.hpp"

namespace gdn::profiler {

// Quantile q in [0, 1] of the samples, linear interpolation between order statistics
// (Hyndman-Fan type 7, numpy's default). Throws std::invalid_argument on an empty span or
// q outside [0, 1].
double quantile(std::span<const double> samples, double q);

struct Quantiles {
  double p20 = 0.0;
  double p50 = 0.0;
  double p80 = 0.0;
};
Quantiles quantiles(std::span<const double> samples);  // throws on an empty span

// Robust relative spread (p80 - p20) / p50: insensitive to the rare preempted sample that
// would dominate a standard deviation. 0 for fewer than two samples; +inf when p50 == 0.
double relative_spread(std::span<const double> samples);

enum class StopReason {
  NotYet,      // keep sampling
  Converged,   // spread <= target after at least min_samples
  MaxSamples,  // reached max_samples
  TimeCap,     // time_cap_ms elapsed (after at least one sample)
};
std::string_view to_string(StopReason r);

// Decides whether the loop has enough samples. Pure: same inputs, same answer.
StopReason stop_decision(const Protocol& p, std::span<const double> samples, double elapsed_ms);

}  // namespace gdn::profiler
