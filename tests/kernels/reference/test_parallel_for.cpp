// gdn::ref::parallel_for, the loop behind the reference's thread split and the tuner's input
// generation: every index exactly once on any thread count, serial order on one thread, and
// the first exception rethrown after all threads finish.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "gdn/parallel_for.hpp"

namespace gdn {
namespace {

TEST(ParallelFor, EveryIndexExactlyOnceOnAnyThreadCount) {
  for (int threads : {0, 1, 2, 7, 64}) {
    std::vector<std::atomic<int>> hits(1000);
    ref::parallel_for(1000, threads, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].load(), 1) << "index " << i << ", threads " << threads;
  }
  int calls = 0;
  ref::parallel_for(0, 0, [&](int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, OneThreadRunsInOrderOnTheCaller) {
  std::vector<int64_t> order;
  ref::parallel_for(5, 1, [&](int64_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(ParallelFor, RethrowsAnExceptionAfterTheOtherIndicesRan) {
  std::atomic<int> done{0};
  EXPECT_THROW(ref::parallel_for(100, 4,
                                 [&](int64_t i) {
                                   if (i == 37) throw std::runtime_error("index 37");
                                   done.fetch_add(1);
                                 }),
               std::runtime_error);
  EXPECT_EQ(done.load(), 99);
}

}  // namespace
}  // namespace gdn
