// The order in which the persistent prepare grid (beside the column-warp loop) takes chunks
// (and, from the units' ends, the local-gradient kernel beside the backward's chain):
// by a chunk's offset within its unit (sequence, or CP segment) first, then by unit, so that
// the loop, which starts every unit at once and walks it chunk by chunk, finds its chunks
// prepared in the order it needs them (ChunkWorkspace::order_bounds). Host and device, so that
// a CPU test checks the mapping on layouts of every kind.
#pragma once

#include <cstdint>

#include "arch/host_device.cuh"

namespace gdn::staged {

// Whether the (offset, unit) slots are worth walking: units x unit_chunks slots for
// total_chunks chunks; when more than half of the slots would be empty (ragged units), the
// grid goes chunk by chunk instead.
GDN_HOST_DEVICE inline bool order_by_unit(int64_t units, int64_t unit_chunks,
                                          int64_t total_chunks) {
  return units * unit_chunks <= 2 * total_chunks;
}

// Sets chunk to the chunk of slot `slot` (offset o = slot / units within unit u = slot %
// units: chunk o of unit u) and returns whether the unit has it (more than o chunks). Unit u
// spans chunks [bounds[u stride], bounds[u stride + 1]).
GDN_HOST_DEVICE inline bool chunk_of_slot(int64_t slot, const int64_t* bounds, int stride,
                                          int64_t units, int64_t& chunk) {
  const int64_t o = slot / units, u = slot - o * units;
  const int64_t* b = bounds + u * stride;
  chunk = b[0] + o;
  return chunk < b[1];
}

// The same walk from the units' ends (the backward's reverse chain walks every unit from its
// last chunk): chunk o before the end of unit u for slot o units + u; false when the unit has
// no such chunk.
GDN_HOST_DEVICE inline bool chunk_of_slot_from_end(int64_t slot, const int64_t* bounds,
                                                   int stride, int64_t units, int64_t& chunk) {
  const int64_t o = slot / units, u = slot - o * units;
  const int64_t* b = bounds + u * stride;
  chunk = b[1] - 1 - o;
  return chunk >= b[0];
}

}  // namespace gdn::staged
