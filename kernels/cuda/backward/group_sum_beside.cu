// The group sum beside the fused backward kernel (see group_sum_beside.cuh).
#include "arch/grid_dependency.cuh"
#include "group_sum_beside.cuh"
#include "group_sum_queue.hpp"
#include "staged/group_sum_row.cuh"

namespace gdn::bwd {
namespace {

constexpr int kThreads = 256;
constexpr int kSteps = kK / staged::kGroupSumCols;  // 16-byte steps per row
constexpr int64_t kQueueDone = -2;

// The fused kernel's item: its CP segment, else its sequence.
__device__ __forceinline__ bool item_chunks(const GroupSumBesideParams& p, int64_t item, int64_t& begin,
                                            int64_t& end) {
  if (p.segs) {
    const fused::Segment seg = p.segs[item];
    begin = seg.chunk_begin, end = seg.chunk_end;
    return (seg.flags & fused::Segment::kUsed) != 0;
  }
  begin = p.chunk_first[item], end = p.chunk_first[item + 1];
  return true;
}

template <class Elem>
__global__ void __launch_bounds__(kThreads) group_sum_beside_kernel(const __grid_constant__ GroupSumBesideParams p) {
  const Dims& d = p.d;
  const GroupSumQueue queue{p.items, p.max_item_chunks, d.Hk};
  const auto units = static_cast<uint32_t>(queue.units());
  const auto range = [&p](int64_t item, int64_t& begin, int64_t& end) { return item_chunks(p, item, begin, end); };
  __shared__ int64_t s_chunk[2];  // double-buffered: thread 0 fills the next while others read
  __shared__ int s_kh[2];
  __shared__ bool s_after_grid[2];
  for (int round = 0;; ++round) {
    const int b = round % 2;
    if (threadIdx.x == 0) {
      GroupSumUnit unit{GroupSumUnit::kNone, 0, false};
      while (unit.chunk == GroupSumUnit::kNone) {
        const uint32_t u = atomicAdd(p.queue, 1u);
        unit = u < units ? group_sum_unit(queue, u, range) : GroupSumUnit{kQueueDone, 0, false};
      }
      const int64_t c = unit.chunk;
      const int kh = unit.kh;
      if (c >= 0 && !unit.after_grid) {
        // Every value head of the group has published chunk c (acquire: their parts' stores,
        // released by the fused kernel's fence, are visible to this thread; the barrier below
        // passes them on to the CTA).
        for (int g = 0; g < d.group; ++g)
          wait_until_at_least(p.published + c * d.Hv + int64_t(kh) * d.group + g, 1);
      }
      s_chunk[b] = c, s_kh[b] = kh, s_after_grid[b] = unit.after_grid;
    }
    __syncthreads();
    const int64_t c = s_chunk[b];
    if (c == kQueueDone) break;
    const int kh = s_kh[b];
    // An item's first chunk: after the fused kernel has completed (its parts then visible).
    if (s_after_grid[b]) wait_for_prior_grids();
    const ChunkInfo ci = p.table[c];
    for (int e = threadIdx.x; e < ci.len * kSteps; e += kThreads)
      staged::sum_group_row8<Elem, true>(d, p.dq_h, p.dk_h, true, p.dq, p.dk, ci.tok_begin + e / kSteps, kh,
                                         (e % kSteps) * staged::kGroupSumCols);
  }
  // This grid completes after the fused kernel (what follows in the stream waits for this one
  // alone).
  wait_for_prior_grids();
}

}  // namespace

cudaError_t launch_group_sum_beside(const GroupSumBesideParams& p, int ctas, cudaStream_t stream) {
  if (p.d.Ttot == 0 || p.items == 0 || ctas <= 0) return cudaSuccess;
  if (!group_sum_beside_fits(p, ctas)) return cudaErrorInvalidValue;
  return p.d.in_bf16 ? launch_after_prior(group_sum_beside_kernel<__nv_bfloat16>, dim3(ctas), dim3(kThreads),
                                          0, stream, p)
                     : launch_after_prior(group_sum_beside_kernel<__half>, dim3(ctas), dim3(kThreads), 0,
                                          stream, p);
}

}  // namespace gdn::bwd
