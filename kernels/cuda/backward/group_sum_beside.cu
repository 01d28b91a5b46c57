// The group sum beside the fused backward kernel (see group_sum_beside.cuh).
#include "arch/grid_dependency.cuh"
#include "group_sum_beside.cuh"
#include "staged/group_sum_row.cuh"

namespace gdn::bwd {
namespace {

constexpr int kThreads = 256;
constexpr int kSteps = kK / staged::kGroupSumCols;  // 16-byte steps per row
constexpr int64_t kNoUnit = -1, kQueueDone = -2;

// Unit u of the queue, it-major so that units come in the order the fused CTAs (all resident)
// publish them: first every chunk but the items' first ones, the it-th from the end of item
// `item` (q/k head kh) in round it; then the items' first chunks, which the fused kernel does
// not publish (the group sum takes them once it has completed: after_grid). Chunk kNoUnit where
// the item has no such chunk or is an unused segment.
struct Unit {
  int64_t chunk;
  int kh;
  bool after_grid;
};
// (32-bit: the launch checks that the queue's units fit.)
__device__ __forceinline__ Unit unit_of(const GroupSumBesideParams& p, uint32_t u) {
  const auto per_round = static_cast<uint32_t>(p.items * p.d.Hk);
  const auto published_units = static_cast<uint32_t>(p.max_item_chunks - 1) * per_round;
  Unit out{kNoUnit, 0, u >= published_units};
  const uint32_t v = out.after_grid ? u - published_units : u;
  const auto hk = static_cast<uint32_t>(p.d.Hk);
  const int64_t it = v / per_round;
  const int64_t item = (v % per_round) / hk;
  out.kh = static_cast<int>(v % hk);
  int64_t begin, end;
  if (p.segs) {
    const fused::Segment seg = p.segs[item];
    if (!(seg.flags & fused::Segment::kUsed)) return out;
    begin = seg.chunk_begin, end = seg.chunk_end;
  } else {
    begin = p.chunk_first[item], end = p.chunk_first[item + 1];
  }
  if (out.after_grid) out.chunk = end > begin ? begin : kNoUnit;
  else out.chunk = end - 1 - it > begin ? end - 1 - it : kNoUnit;
  return out;
}

template <class Elem>
__global__ void __launch_bounds__(kThreads) group_sum_beside_kernel(const __grid_constant__ GroupSumBesideParams p) {
  const Dims& d = p.d;
  // The published chunks' rounds, then one round of the items' first chunks.
  const auto units = static_cast<uint32_t>(p.max_item_chunks * p.items * d.Hk);
  __shared__ int64_t s_chunk[2];  // double-buffered: thread 0 fills the next while others read
  __shared__ int s_kh[2];
  __shared__ bool s_after_grid[2];
  for (int round = 0;; ++round) {
    const int b = round % 2;
    if (threadIdx.x == 0) {
      Unit unit{kNoUnit, 0, false};
      while (unit.chunk == kNoUnit) {
        const uint32_t u = atomicAdd(p.queue, 1u);
        unit = u < units ? unit_of(p, u) : Unit{kQueueDone, 0, false};
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
