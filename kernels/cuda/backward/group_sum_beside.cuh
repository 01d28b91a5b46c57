// dq and dk summed over each q/k head's value heads beside the fused backward kernel
// (BackwardPlan::group_sum_beside), instead of a group-sum launch after it.
//
// With fewer fused CTAs than SMs (long sequences, few heads: the rows CP splits into a few
// segments) most SMs sit idle while the fused kernel walks its chunks, and the group sum that
// follows it reads every value head's 16-bit parts back from HBM. This grid runs on the idle
// SMs instead: launched as the fused kernel's programmatic dependent, once every fused CTA
// runs (FusedBwdParams::published), its CTAs take units (chunk, q/k head) from a queue in the
// order the fused kernel produces them (the it-th chunk from the end of every item, item by
// item, before the (it+1)-th), wait until every value head of the group has published the
// chunk, and sum its rows as the group-sum launch does (staged/group_sum_row.cuh: the same
// order, the same bits), reading the parts while they are still in L2. An item's first chunk,
// the last the fused kernel walks, is not published (no release of the kernel follows its dk
// stores): those units come last and wait for the fused grid to complete. Each CTA waits for
// the fused kernel before it exits, so the grid completes after it and what follows in the
// stream (the short-chunk repair) sees both.
#pragma once

#include <cuda_runtime.h>

#include "bwd_params.cuh"  // Dims, ChunkInfo, fused::Segment
#include "group_sum_queue.hpp"

namespace gdn::bwd {

struct GroupSumBesideParams {
  Dims d;
  // The fused kernel's items: its CP segments (segs, items of them), else the sequences
  // (chunk_first); max_item_chunks bounds an item's chunks (the queue's rounds).
  const fused::Segment* segs;
  const int64_t* chunk_first;
  const ChunkInfo* table;
  int64_t items;
  int64_t max_item_chunks;
  const int* published;  // [max_chunks, Hv]: FusedBwdParams::published
  unsigned* queue;       // the next unit, zero before the launch
  const void* dq_h;      // [Ttot, Hv, K] parts in the input dtype
  const void* dk_h;
  void* dq;              // [Ttot, Hk, K]
  void* dk;
};

// Whether the queue's units (and each CTA's one take past them) fit its 32-bit counter; else
// the caller runs the group-sum launch after the fused kernel.
inline bool group_sum_beside_fits(const GroupSumBesideParams& p, int ctas) {
  return GroupSumQueue{p.items, p.max_item_chunks, p.d.Hk}.units() + ctas < (int64_t(1) << 32);
}

// ctas: the persistent grid (the launch plan's group_sum_ctas).
cudaError_t launch_group_sum_beside(const GroupSumBesideParams& p, int ctas, cudaStream_t stream);

}  // namespace gdn::bwd
