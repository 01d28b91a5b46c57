#include <gtest/gtest.h>

#include <vector>

#include "activity_grouping.hpp"

using gdn::profiler::detail::group_kernel_records;
using gdn::profiler::detail::KernelRecord;

TEST(ActivityGrouping, SpanAndBusyPerSampleInIdOrder) {
  // Sample 11: two kernels (correlations 1, 2) with a 50 ns gap; sample 12: correlation 3.
  const std::vector<KernelRecord> kernels{{2, 1150, 1300}, {1, 1000, 1100}, {3, 5000, 5400}};
  const std::unordered_map<std::uint32_t, std::uint64_t> ext{{1, 11}, {2, 11}, {3, 12}};
  // Sample 12 alone has one kernel: with 2 per call it is incomplete.
  auto g = group_kernel_records(kernels, ext, std::vector<std::uint64_t>{11, 12}, 0);
  EXPECT_EQ(g.kernels_per_call, 2);
  EXPECT_EQ(g.incomplete, 1);
  ASSERT_EQ(g.span_ms.size(), 1u);
  EXPECT_DOUBLE_EQ(g.span_ms[0], 300e-6);  // 1000 .. 1300 ns
  EXPECT_DOUBLE_EQ(g.busy_ms[0], 250e-6);  // 100 + 150 ns
}

TEST(ActivityGrouping, IgnoresUntaggedAndForeignRecords) {
  const std::vector<KernelRecord> kernels{{1, 0, 1000}, {2, 0, 999999}, {3, 0, 888888}};
  // 2: tagged for a sample of another batch; 3: not tagged (e.g. the L2 flush).
  const std::unordered_map<std::uint32_t, std::uint64_t> ext{{1, 7}, {2, 99}};
  auto g = group_kernel_records(kernels, ext, std::vector<std::uint64_t>{7}, 0);
  ASSERT_EQ(g.span_ms.size(), 1u);
  EXPECT_DOUBLE_EQ(g.span_ms[0], 1e-3);
  EXPECT_EQ(g.incomplete, 0);
}

TEST(ActivityGrouping, SamplesWithoutRecordsAreIncomplete) {
  const std::vector<KernelRecord> kernels{{1, 0, 10}};
  const std::unordered_map<std::uint32_t, std::uint64_t> ext{{1, 1}};
  auto g = group_kernel_records(kernels, ext, std::vector<std::uint64_t>{1, 2, 3}, 0);
  EXPECT_EQ(g.span_ms.size(), 1u);
  EXPECT_EQ(g.incomplete, 2);
}

TEST(ActivityGrouping, ExpectedCountFromEarlierBatchesApplies) {
  const std::vector<KernelRecord> kernels{{1, 0, 10}};
  const std::unordered_map<std::uint32_t, std::uint64_t> ext{{1, 1}};
  auto g = group_kernel_records(kernels, ext, std::vector<std::uint64_t>{1}, 3);
  EXPECT_EQ(g.kernels_per_call, 3);
  EXPECT_TRUE(g.span_ms.empty());
  EXPECT_EQ(g.incomplete, 1);
}
