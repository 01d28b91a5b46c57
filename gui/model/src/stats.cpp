#include "gdn/gui/model/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gdn::gui::model {

double quantile(std::span<const double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile: the sample is empty");
  if (!(q >= 0.0 && q <= 1.0))
    throw std::invalid_argument("quantile: q must be in [0, 1], got " + std::to_string(q));
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double position = q * double(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double weight = position - double(below);
  return sorted[below] + weight * (sorted[above] - sorted[below]);
}

Quantiles quantiles_20_50_80(std::span<const double> values) {
  return {quantile(values, 0.2), quantile(values, 0.5), quantile(values, 0.8)};
}

int Histogram::max_count() const {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

Histogram make_histogram(std::span<const double> values, int bins) {
  if (bins < 1)
    throw std::invalid_argument("make_histogram: bins must be >= 1, got " + std::to_string(bins));
  Histogram h;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  if (values.empty()) {
    h.lo = 0;
    h.hi = 1;
    return h;
  }
  const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  h.lo = *min_it;
  h.hi = *max_it;
  if (h.hi <= h.lo) {  // a degenerate sample still gets a visible bar
    h.lo -= 0.5;
    h.hi += 0.5;
  }
  const double width = (h.hi - h.lo) / bins;
  for (double v : values) {
    int bin = static_cast<int>((v - h.lo) / width);
    bin = std::clamp(bin, 0, bins - 1);
    ++h.counts[static_cast<std::size_t>(bin)];
  }
  return h;
}

int suggested_bin_count(std::span<const double> values, int min_bins, int max_bins) {
  if (values.size() < 4) return min_bins;
  const double iqr = quantile(values, 0.75) - quantile(values, 0.25);
  const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  const double span = *max_it - *min_it;
  if (iqr <= 0 || span <= 0) return min_bins;
  const double width = 2.0 * iqr / std::cbrt(double(values.size()));
  const double bins = std::ceil(span / width);
  return static_cast<int>(std::clamp(bins, double(min_bins), double(max_bins)));
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || target < 1) return ticks;
  const double raw_step = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw_step) break;
  }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

Range padded_range(std::span<const double> values, double pad_fraction) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) return {};
  if (hi <= lo) return {lo - 0.5, hi + 0.5};
  const double pad = (hi - lo) * pad_fraction;
  return {lo - pad, hi + pad};
}

}  // namespace gdn::gui::model
