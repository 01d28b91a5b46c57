// The queue of the group sum beside the fused backward kernel, on the host (the kernel takes its
// units from the same code): over every unit, each chunk of every used item comes exactly once
// per q/k head, every chunk but an item's first in the published rounds and in publication
// order (the fused CTAs walk their items from the end, all at once), the items' first chunks in
// the last round, after the fused grid; unused segments and missing chunks give no unit.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "backward/group_sum_queue.hpp"

namespace gdn::bwd {
namespace {

struct Item {
  int64_t begin, end;
  bool used = true;
};

void check_queue(const std::vector<Item>& items, int64_t max_item_chunks, int hk) {
  const GroupSumQueue q{static_cast<int64_t>(items.size()), max_item_chunks, hk};
  const auto range = [&items](int64_t item, int64_t& begin, int64_t& end) {
    begin = items[static_cast<std::size_t>(item)].begin, end = items[static_cast<std::size_t>(item)].end;
    return items[static_cast<std::size_t>(item)].used;
  };
  std::map<std::pair<int64_t, int>, int> seen;  // (chunk, kh) -> units
  int64_t last_step = -1;                        // the published rounds' order: steps from the end
  bool after_grid_started = false;
  for (uint32_t u = 0; u < q.units(); ++u) {
    const GroupSumUnit unit = group_sum_unit(q, u, range);
    ASSERT_GE(unit.kh, 0);
    ASSERT_LT(unit.kh, hk);
    after_grid_started |= unit.after_grid;
    EXPECT_EQ(unit.after_grid, after_grid_started) << "unit " << u << ": published rounds come first";
    if (unit.chunk == GroupSumUnit::kNone) continue;
    ++seen[{unit.chunk, unit.kh}];
    // The chunk's item and its place from the item's end.
    const Item* owner = nullptr;
    for (const Item& it : items)
      if (it.used && unit.chunk >= it.begin && unit.chunk < it.end) owner = &it;
    ASSERT_NE(owner, nullptr) << "chunk " << unit.chunk << " of no used item";
    EXPECT_EQ(unit.after_grid, unit.chunk == owner->begin) << "chunk " << unit.chunk;
    if (!unit.after_grid) {
      const int64_t step = owner->end - 1 - unit.chunk;
      EXPECT_GE(step, last_step) << "unit " << u << ": out of publication order";
      last_step = step;
    }
  }
  for (const Item& it : items)
    for (int64_t c = it.begin; c < it.end; ++c)
      for (int kh = 0; kh < hk; ++kh) {
        const auto found = seen.find({c, kh});
        EXPECT_EQ(found == seen.end() ? 0 : found->second, it.used ? 1 : 0) << "chunk " << c << " kh " << kh;
      }
}

// CP: segments of up to 4 chunks over sequences of 10 and 3 chunks, the table's unused slots
// at the end, 2 q/k heads.
TEST(GroupSumQueue, CpSegmentsEachChunkOncePerHeadInPublicationOrder) {
  check_queue({{0, 4}, {4, 8}, {8, 10}, {10, 13}, {13, 13, false}, {13, 13, false}}, 4, 2);
}

// Without CP: sequences of 0, 1, 7 and 2 chunks (the bound: the table's 10 chunks), 3 heads.
TEST(GroupSumQueue, SequencesOfEveryLengthIncludingEmptyAndOneChunk) {
  check_queue({{0, 0}, {0, 1}, {1, 8}, {8, 10}}, 10, 3);
}

// Items of one chunk only: every unit waits for the grid.
TEST(GroupSumQueue, OneChunkItemsAreAllTakenAfterTheGrid) {
  const std::vector<Item> items{{0, 1}, {1, 2}, {2, 3}};
  check_queue(items, 1, 4);
  const GroupSumQueue q{3, 1, 4};
  EXPECT_EQ(q.units(), 12);
  const auto range = [&items](int64_t item, int64_t& begin, int64_t& end) {
    begin = items[static_cast<std::size_t>(item)].begin, end = items[static_cast<std::size_t>(item)].end;
    return true;
  };
  for (uint32_t u = 0; u < 12; ++u) EXPECT_TRUE(group_sum_unit(q, u, range).after_grid) << u;
}

}  // namespace
}  // namespace gdn::bwd
