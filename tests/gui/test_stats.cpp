// Quantiles, histograms, ticks and ranges of the plotting model.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "gdn/gui/model/stats.hpp"

using namespace gdn::gui::model;

TEST(Stats, QuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Quantiles q = quantiles_20_50_80(ten);
  EXPECT_DOUBLE_EQ(q.p20, 2.8);
  EXPECT_DOUBLE_EQ(q.p50, 5.5);
  EXPECT_DOUBLE_EQ(q.p80, 8.2);
}

TEST(Stats, QuantileRejectsEmptySampleAndBadQ) {
  const std::vector<double> none;
  EXPECT_THROW(quantile(none, 0.5), std::invalid_argument);
  const std::vector<double> one = {1.0};
  EXPECT_THROW(quantile(one, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile(one, NAN), std::invalid_argument);
}

TEST(Stats, HistogramCountsEverySampleOnceWithMaxInLastBin) {
  const std::vector<double> v = {0, 0.1, 0.5, 0.9, 1.0, 1.0};
  const Histogram h = make_histogram(v, 4);
  ASSERT_EQ(h.counts.size(), 4u);
  EXPECT_EQ(h.counts[0], 2);
  EXPECT_EQ(h.counts[2], 1);
  EXPECT_EQ(h.counts[3], 3);
  EXPECT_EQ(h.max_count(), 3);
  EXPECT_DOUBLE_EQ(h.bin_width(), 0.25);
}

TEST(Stats, HistogramOfConstantOrEmptySampleStaysDrawable) {
  const std::vector<double> same = {2, 2, 2};
  const Histogram h = make_histogram(same, 5);
  EXPECT_LT(h.lo, 2.0);
  EXPECT_GT(h.hi, 2.0);
  int total = 0;
  for (int c : h.counts) total += c;
  EXPECT_EQ(total, 3);
  const Histogram empty = make_histogram(std::vector<double>{}, 3);
  EXPECT_EQ(empty.max_count(), 0);
  EXPECT_THROW(make_histogram(same, 0), std::invalid_argument);
}

TEST(Stats, BinCountFollowsSpreadWithinBounds) {
  std::vector<double> wide;
  for (int i = 0; i < 1000; ++i) wide.push_back(i);
  const int bins = suggested_bin_count(wide, 8, 64);
  EXPECT_GE(bins, 8);
  EXPECT_LE(bins, 64);
  EXPECT_EQ(suggested_bin_count(std::vector<double>{1, 1, 1, 1, 1}, 8, 64), 8);
}

TEST(Stats, NiceTicksAreRoundAndCoverTheRange) {
  const auto t = nice_ticks(0.013, 0.087, 5);
  ASSERT_FALSE(t.empty());
  EXPECT_GE(t.front(), 0.013);
  EXPECT_LE(t.back(), 0.087 + 1e-12);
  // (0.087 - 0.013) / 5 = 0.0148 rounds up to the next 1/2/5 step: 0.02.
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], 0.02, 1e-12);
  EXPECT_TRUE(nice_ticks(1, 1, 5).empty());
  EXPECT_TRUE(nice_ticks(0, INFINITY, 5).empty());
}

TEST(Stats, PaddedRangeIgnoresNaN) {
  const std::vector<double> v = {NAN, 1, 3, NAN};
  const Range r = padded_range(v, 0.5);
  EXPECT_DOUBLE_EQ(r.lo, 0.0);
  EXPECT_DOUBLE_EQ(r.hi, 4.0);
  const Range none = padded_range(std::vector<double>{NAN});
  EXPECT_DOUBLE_EQ(none.lo, 0.0);
  EXPECT_DOUBLE_EQ(none.hi, 1.0);
}
