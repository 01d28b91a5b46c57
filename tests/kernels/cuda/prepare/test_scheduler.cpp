// The persistent prepare grid's chunk order (prepare/scheduler.cuh), host only: every chunk is
// taken exactly once, by offset within its unit first, then by unit; ragged units fall back
// to chunk by chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "prepare/scheduler.cuh"

namespace gdn::staged {
namespace {

// chunk_first of sequences with these chunk counts (the non-CP units, stride 1).
std::vector<int64_t> chunk_first_of(const std::vector<int64_t>& chunks) {
  std::vector<int64_t> first{0};
  for (int64_t c : chunks) first.push_back(first.back() + c);
  return first;
}

// The CP segment table's chunk ranges as fill_segments lays them out (three int64 per entry:
// begin, end, then seq and flags), with `unused` empty entries at the end.
std::vector<int64_t> segment_table_of(const std::vector<int64_t>& chunks, int64_t cp,
                                      int64_t unused) {
  std::vector<int64_t> t;
  int64_t begin = 0;
  for (int64_t c : chunks) {
    for (int64_t s = 0; s < (c + cp - 1) / cp; ++s) {
      const int64_t b = begin + s * cp, e = std::min(begin + c, b + cp);
      t.insert(t.end(), {b, e, 0x7});
    }
    begin += c;
  }
  for (int64_t i = 0; i < unused; ++i) t.insert(t.end(), {0, 0, 0});
  return t;
}

// Walks every slot as the kernel does (from_end: from the units' ends, as the local kernel
// beside the backward's chain does); checks each of the total chunks comes exactly once and the
// position within the unit (offset from its start, or distance from its end) never decreases
// along the walk. Returns the walk.
std::vector<int64_t> walk(const std::vector<int64_t>& bounds, int stride, int64_t units,
                          int64_t unit_chunks, int64_t total, bool from_end = false) {
  std::vector<int64_t> order;
  std::map<int64_t, int> seen;
  int64_t last_position = -1;
  for (int64_t slot = 0; slot < units * unit_chunks; ++slot) {
    int64_t chunk = -1;
    const int64_t u = slot % units;
    const int64_t* b = bounds.data() + u * stride;
    if (from_end ? !chunk_of_slot_from_end(slot, bounds.data(), stride, units, chunk)
                 : !chunk_of_slot(slot, bounds.data(), stride, units, chunk))
      continue;
    const int64_t position = from_end ? b[1] - 1 - chunk : chunk - b[0];
    EXPECT_GE(position, last_position) << "slot " << slot;
    last_position = position;
    ++seen[chunk];
    order.push_back(chunk);
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), total);
  for (const auto& [chunk, n] : seen) {
    EXPECT_EQ(n, 1) << "chunk " << chunk;
    EXPECT_GE(chunk, 0);
    EXPECT_LT(chunk, total);
  }
  return order;
}

TEST(PrepareOrder, FromTheEndsEqualSequencesInterleaveFromTheirLastChunks) {
  const std::vector<int64_t> first = chunk_first_of({3, 3, 3});
  EXPECT_EQ(walk(first, 1, 3, 3, 9, true), (std::vector<int64_t>{2, 5, 8, 1, 4, 7, 0, 3, 6}));
}

TEST(PrepareOrder, FromTheEndsRaggedSequencesSkipTheMissingDistances) {
  // 24, 21, 0 and 11 chunks: 96 slots for 56 chunks; the empty sequence never yields one.
  const std::vector<int64_t> first = chunk_first_of({24, 21, 0, 11});
  const std::vector<int64_t> order = walk(first, 1, 4, 24, 56, true);
  EXPECT_EQ(std::vector<int64_t>(order.begin(), order.begin() + 3), (std::vector<int64_t>{23, 44, 55}));
  EXPECT_EQ(order.back(), 0);  // the longest sequence's first chunk comes last
}

TEST(PrepareOrder, EqualSequencesInterleaveChunkByChunk) {
  const std::vector<int64_t> first = chunk_first_of({3, 3, 3});
  EXPECT_TRUE(order_by_unit(3, 3, 9));
  EXPECT_EQ(walk(first, 1, 3, 3, 9), (std::vector<int64_t>{0, 3, 6, 1, 4, 7, 2, 5, 8}));
}

TEST(PrepareOrder, RaggedSequencesSkipTheMissingOffsets) {
  // 24, 21, 0 and 11 chunks (the GPU overlap test's ragged case): 96 slots for 56 chunks.
  const std::vector<int64_t> chunks{24, 21, 0, 11};
  const std::vector<int64_t> first = chunk_first_of(chunks);
  EXPECT_TRUE(order_by_unit(4, 24, 56));
  const std::vector<int64_t> order = walk(first, 1, 4, 24, 56);
  EXPECT_EQ(std::vector<int64_t>(order.begin(), order.begin() + 3), (std::vector<int64_t>{0, 24, 45}));
}

TEST(PrepareOrder, SegmentsOfOneSequenceAndOfSeveral) {
  // One sequence of 47 chunks in 16-chunk segments (plus the table's one spare entry).
  const std::vector<int64_t> one = segment_table_of({47}, 16, 1);
  EXPECT_TRUE(order_by_unit(4, 16, 47));
  const std::vector<int64_t> order = walk(one, 3, 4, 16, 47);
  EXPECT_EQ(std::vector<int64_t>(order.begin(), order.begin() + 4), (std::vector<int64_t>{0, 16, 32, 1}));
  // Three sequences of 18 chunks in 8-chunk segments: 9 segments, 3 of 2 chunks.
  const std::vector<int64_t> three = segment_table_of({18, 18, 18}, 8, 3);
  const int64_t units = static_cast<int64_t>(three.size() / 3);
  EXPECT_TRUE(order_by_unit(units, 8, 54));
  walk(three, 3, units, 8, 54);
}

TEST(PrepareOrder, TooRaggedUnitsGoChunkByChunk) {
  // One 40-chunk sequence among eleven of one chunk (the GPU overlap test's skewed case):
  // 480 slots for 51 chunks.
  EXPECT_FALSE(order_by_unit(12, 40, 51));
  // Half the slots empty is still walked; more is not.
  EXPECT_TRUE(order_by_unit(2, 10, 10));
  EXPECT_FALSE(order_by_unit(2, 11, 10));
  // No chunk at all: nothing to walk either way.
  EXPECT_TRUE(order_by_unit(3, 0, 0));
}

}  // namespace
}  // namespace gdn::staged
