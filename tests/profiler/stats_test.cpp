#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "gdn/profiler/stats.hpp"

namespace gp = gdn::profiler;

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  const std::vector<double> v{5, 1, 4, 2, 3};  // sorted: 1 2 3 4 5
  EXPECT_DOUBLE_EQ(gp::quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(gp::quantile(v, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(gp::quantile(v, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(gp::quantile(v, 0.2), 1.8);  // h = 0.8 between 1 and 2
  EXPECT_DOUBLE_EQ(gp::quantile(v, 0.8), 4.2);
}

TEST(Quantile, SingleSampleIsEveryQuantile) {
  const std::vector<double> v{7.5};
  const gp::Quantiles q = gp::quantiles(v);
  EXPECT_EQ(q.p20, 7.5);
  EXPECT_EQ(q.p50, 7.5);
  EXPECT_EQ(q.p80, 7.5);
}

TEST(Quantile, RejectsEmptyAndOutOfRange) {
  const std::vector<double> none;
  EXPECT_THROW(gp::quantile(none, 0.5), std::invalid_argument);
  const std::vector<double> v{1, 2};
  try {
    gp::quantile(v, 1.5);
    FAIL() << "q = 1.5 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[0, 1]"), std::string::npos) << e.what();
  }
}

TEST(RelativeSpread, IsInterQuantileRangeOverMedian) {
  const std::vector<double> v{1, 2, 3, 4, 5};
  EXPECT_NEAR(gp::relative_spread(v), (4.2 - 1.8) / 3.0, 1e-12);
  EXPECT_EQ(gp::relative_spread(std::vector<double>{2.0}), 0.0);
  EXPECT_TRUE(std::isinf(gp::relative_spread(std::vector<double>{0.0, 0.0, 0.0})));
}

TEST(RelativeSpread, IgnoresOneOutlier) {
  std::vector<double> v(50, 1.0);
  v[10] = 100.0;  // a preempted sample
  EXPECT_EQ(gp::relative_spread(v), 0.0);
}

class StopRule : public ::testing::Test {
 protected:
  gp::Protocol p = [] {
    gp::Protocol x;
    x.min_samples = 5;
    x.max_samples = 10;
    x.target_rel_spread = 0.01;
    x.time_cap_ms = 100.0;
    return x;
  }();
};

TEST_F(StopRule, WaitsForMinSamplesEvenWhenConverged) {
  EXPECT_EQ(gp::stop_decision(p, std::vector<double>(4, 1.0), 0.0), gp::StopReason::NotYet);
  EXPECT_EQ(gp::stop_decision(p, std::vector<double>(5, 1.0), 0.0), gp::StopReason::Converged);
}

TEST_F(StopRule, KeepsGoingWhileSpreadIsLarge) {
  const std::vector<double> noisy{1, 2, 1, 2, 1, 2};
  EXPECT_EQ(gp::stop_decision(p, noisy, 1.0), gp::StopReason::NotYet);
}

TEST_F(StopRule, StopsAtMaxSamples) {
  const std::vector<double> noisy{1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  EXPECT_EQ(gp::stop_decision(p, noisy, 1.0), gp::StopReason::MaxSamples);
}

TEST_F(StopRule, TimeCapNeedsOneSampleButNotMinSamples) {
  EXPECT_EQ(gp::stop_decision(p, std::vector<double>{}, 500.0), gp::StopReason::NotYet);
  EXPECT_EQ(gp::stop_decision(p, std::vector<double>{1.0, 2.0}, 100.0), gp::StopReason::TimeCap);
}

TEST_F(StopRule, ConvergesAtTargetSpreadNotAbove) {
  p.max_samples = 20;
  const std::vector<double> v{0.998, 0.998, 1.0, 1.002, 1.002, 0.998, 1.0, 1.002, 1.0, 1.0};
  const double spread = gp::relative_spread(v);
  ASSERT_GT(spread, 0.0);
  p.target_rel_spread = spread;  // "<= target" converges
  EXPECT_EQ(gp::stop_decision(p, v, 0.0), gp::StopReason::Converged);
  p.target_rel_spread = spread * 0.99;
  EXPECT_EQ(gp::stop_decision(p, v, 0.0), gp::StopReason::NotYet);
}

TEST(StopReasonNames, AreStable) {
  EXPECT_EQ(gp::to_string(gp::StopReason::Converged), "converged");
  EXPECT_EQ(gp::to_string(gp::StopReason::MaxSamples), "max_samples");
  EXPECT_EQ(gp::to_string(gp::StopReason::TimeCap), "time_cap");
  EXPECT_EQ(gp::to_string(gp::StopReason::NotYet), "not_yet");
}
