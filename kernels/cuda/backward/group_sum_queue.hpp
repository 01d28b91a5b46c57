// The queue of the group sum beside the fused backward kernel (group_sum_beside.cuh): which
// (chunk, q/k head) its u-th unit sums. Host and device: the kernel takes units from it, a
// host test checks that every chunk comes exactly once per q/k head, in publication order.
#pragma once

#include <cstdint>

#include "arch/host_device.cuh"

namespace gdn::bwd {

// Units in rounds of items x hk: round it (< max_item_chunks - 1) holds the it-th chunk from
// the end of every item, which the fused kernel publishes (every chunk but an item's first,
// the last it walks); the last round holds the items' first chunks, which the group sum takes
// after the fused grid has completed (after_grid).
struct GroupSumQueue {
  int64_t items;            // the fused kernel's items (CP segments, or sequences)
  int64_t max_item_chunks;  // a bound on an item's chunks
  int hk;                   // q/k heads
  GDN_HOST_DEVICE int64_t units() const { return max_item_chunks * items * hk; }
};

struct GroupSumUnit {
  static constexpr int64_t kNone = -1;  // no chunk: the item is shorter, or an unused segment
  int64_t chunk;
  int kh;
  bool after_grid;
};

// Unit u (< q.units(), which the launch checks fits 32 bits); range(item, begin, end) gives
// the item's chunks [begin, end) and whether it is used.
template <class ItemRange>
GDN_HOST_DEVICE GroupSumUnit group_sum_unit(const GroupSumQueue& q, uint32_t u, ItemRange range) {
  const auto per_round = static_cast<uint32_t>(q.items * q.hk);
  const auto published_units = static_cast<uint32_t>(q.max_item_chunks - 1) * per_round;
  GroupSumUnit out{GroupSumUnit::kNone, 0, u >= published_units};
  const uint32_t v = out.after_grid ? u - published_units : u;
  const auto hk = static_cast<uint32_t>(q.hk);
  const int64_t it = v / per_round;
  const int64_t item = (v % per_round) / hk;
  out.kh = static_cast<int>(v % hk);
  int64_t begin = 0, end = 0;
  if (!range(item, begin, end)) return out;
  if (out.after_grid) out.chunk = end > begin ? begin : GroupSumUnit::kNone;
  else out.chunk = end - 1 - it > begin ? end - 1 - it : GroupSumUnit::kNone;
  return out;
}

}  // namespace gdn::bwd
