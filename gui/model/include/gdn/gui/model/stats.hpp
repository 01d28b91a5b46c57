// Small statistics the plots need: quantiles of a sample, histogram bins, "nice" axis ticks.
// Pure functions over plain vectors so they are unit-tested without a window or a database.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gdn::gui::model {

// Quantile q in [0, 1] by linear interpolation between order statistics (the "type 7" rule
// of R and NumPy's default), so p50 of {1, 2, 3, 4} is 2.5. Throws std::invalid_argument for
// an empty sample or q outside [0, 1].
double quantile(std::span<const double> values, double q);

struct Quantiles {
  double p20 = 0, p50 = 0, p80 = 0;
};
Quantiles quantiles_20_50_80(std::span<const double> values);

// Equal-width bins over [lo, hi]; the last bin is closed so the maximum lands in it.
struct Histogram {
  double lo = 0, hi = 0;
  std::vector<int> counts;
  int max_count() const;
  double bin_width() const { return counts.empty() ? 0.0 : (hi - lo) / double(counts.size()); }
};
// bins must be >= 1 (std::invalid_argument otherwise). An empty sample gives all-zero counts
// over [0, 1]; a sample whose values are all equal gets a unit-wide range around the value.
Histogram make_histogram(std::span<const double> values, int bins);

// Bin count by the Freedman-Diaconis rule, clamped to [min_bins, max_bins]: it adapts to the
// sample's spread instead of a fixed count that hides bimodal timing distributions.
int suggested_bin_count(std::span<const double> values, int min_bins = 8, int max_bins = 64);

// Axis ticks at 1/2/5 x 10^k steps covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);

// Finite min/max of the values, padded by `pad_fraction` of the span on each side so points do
// not sit on the plot frame. All-NaN or empty input gives [0, 1].
struct Range {
  double lo = 0, hi = 1;
};
Range padded_range(std::span<const double> values, double pad_fraction = 0.05);

}  // namespace gdn::gui::model
