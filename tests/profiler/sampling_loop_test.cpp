#include <gtest/gtest.h>

#include <vector>

#include "sampling_loop.hpp"

namespace gp = gdn::profiler;
using gp::detail::next_batch_size;
using gp::detail::run_sampling_loop;

namespace {
gp::Protocol protocol(int min, int max, double cap_ms) {
  gp::Protocol p;
  p.min_samples = min;
  p.max_samples = max;
  p.time_cap_ms = cap_ms;
  p.target_rel_spread = 0.01;
  return p;
}
}  // namespace

TEST(NextBatchSize, FirstOneThenUpToMinThenEights) {
  const gp::Protocol p = protocol(20, 100, 1e9);
  EXPECT_EQ(next_batch_size(p, 0, 0.0, 0.0), 1);
  EXPECT_EQ(next_batch_size(p, 1, 0.1, 0.1), 19);
  EXPECT_EQ(next_batch_size(p, 20, 1.0, 0.05), 8);
  EXPECT_EQ(next_batch_size(p, 96, 1.0, 0.05), 4);  // never past max_samples
}

TEST(NextBatchSize, RespectsTimeCapByMeasuredCost) {
  const gp::Protocol p = protocol(20, 100, 100.0);
  // 10 ms per sample, 30 ms left: 3 fit, not the 19 needed for min_samples.
  EXPECT_EQ(next_batch_size(p, 1, 70.0, 10.0), 3);
  // Nothing fits any more: still one (the stop rule, not the batch size, ends the loop).
  EXPECT_EQ(next_batch_size(p, 1, 99.0, 10.0), 1);
}

TEST(SamplingLoop, ConvergesOnConstantSamples) {
  const gp::Protocol p = protocol(10, 100, 1e9);
  std::vector<double> samples;
  int batches = 0;
  const auto reason = run_sampling_loop(p, [&](int n, std::vector<double>& s) {
    ++batches;
    s.insert(s.end(), static_cast<std::size_t>(n), 1.0);
  }, samples);
  EXPECT_EQ(reason, gp::StopReason::Converged);
  EXPECT_EQ(samples.size(), 10u);
  EXPECT_EQ(batches, 2);  // 1 then 9
}

TEST(SamplingLoop, StopsAtMaxOnNoise) {
  const gp::Protocol p = protocol(4, 30, 1e9);
  std::vector<double> samples;
  const auto reason = run_sampling_loop(p, [&](int n, std::vector<double>& s) {
    for (int i = 0; i < n; ++i) s.push_back(s.size() % 2 ? 1.0 : 2.0);
  }, samples);
  EXPECT_EQ(reason, gp::StopReason::MaxSamples);
  EXPECT_EQ(samples.size(), 30u);
}

TEST(SamplingLoop, GivesUpAfterThreeEmptyBatches) {
  const gp::Protocol p = protocol(4, 30, 1e9);
  std::vector<double> samples;
  int calls = 0;
  const auto reason = run_sampling_loop(p, [&](int, std::vector<double>&) { ++calls; }, samples);
  EXPECT_EQ(reason, gp::StopReason::NotYet);
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(samples.empty());
}
