// The fused backward kernel (see fused_bwd.cuh): the producer, the roles' dispatch and the
// launch.
#include "arch/grid_dependency.cuh"
#include "arch/launch_smem.cuh"
#include "arch/named_barrier.cuh"
#include "arch/tma.cuh"
#include "fused_bwd.cuh"
#include "fused_bwd_chain.cuh"
#include "fused_bwd_local.cuh"
#include "fused_bwd_state.cuh"

namespace gdn::bwd {
namespace {

// Chunk c's inputs brought into L2 (the boxes produce_chunks loads), a chunk step ahead of its
// loads: those then wait on L2 rather than HBM between two steps (T, S^T and the gates are
// read once, from HBM; q and k once per value head of the group).
__device__ __forceinline__ void prefetch_chunk(const FusedBwdParams& p, int64_t c, int h, int hk) {
  const int tok = static_cast<int>(p.c.table[c].tok_begin);
  const int pair = static_cast<int>(c * p.c.d.Hv + h);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int col = 64 * half;
    fused::tma_prefetch_3d(&p.c.tmap_q, col, hk, tok);
    fused::tma_prefetch_3d(&p.tmap_v, col, h, tok);
    fused::tma_prefetch_3d(&p.c.tmap_do, col, h, tok);
    fused::tma_prefetch_2d(&p.tmap_s, col, pair * kV);
    fused::tma_prefetch_3d(&p.c.tmap_k, col, hk, tok);
  }
  fused::tma_prefetch_2d(&p.c.tmap_t, 0, pair * kC);
  fused::bulk_prefetch(p.c.gate_ef + int64_t(pair) * (3 * kC), static_cast<uint32_t>(FusedSmem::kGateBytes));
}

// Beside the group sum (FusedBwdParams::published): chunk c's dq and dk parts, whose stores
// every math warp issued before arriving on a release this thread has waited for (the
// arrival releases them to the CTA), made visible to the GPU (the fence is cumulative), then
// its count for v-head h raised to one.
__device__ __forceinline__ void publish_chunk(const FusedBwdParams& p, int64_t c, int h) {
  __threadfence();
  atomicAdd(p.published + c * p.c.d.Hv + h, 1);
}

// The producer thread: chunk it of the item (walked from its last chunk) into the single input
// buffer, group by group: A (q, v, dO as two 64-column boxes each, S^T as two 128-row boxes of
// 64 columns) once every math warp has released chunk it - 1's group A, then B (k of the
// v-head's q/k head, T, e/f/beta) once they have released its group B; then the next chunk's
// prefetch into L2. Beside the group sum it also publishes chunk it - 2: the local warps store
// a chunk's dq before they release its group A, the chain warps its dk after they release its
// group B and before they release the next chunk's group A, so chunk it - 1's releases cover
// chunk it - 2's parts. After the loop it waits for the last chunk's group A and publishes the
// chunk before it; the last chunk (the item's first) no release covers: the group sum waits
// for this grid's completion for it (group_sum_beside.cuh).
__device__ __forceinline__ void produce_chunks(const FusedBwdParams& p, const FusedSmem& sm) {
  ChainItem ch;
  chain_item(p.c, kV, ch);
  const Dims& d = p.c.d;
  const int h = ch.h, hk = h / d.group;
  const int64_t first = ch.seg.chunk_begin, last = ch.seg.chunk_end;
  for (int64_t c = last - 1; c >= first; --c) {
    const int it = static_cast<int>(last - 1 - c);
    const auto released = static_cast<uint32_t>((it - 1) % 2);
    const int tok = static_cast<int>(p.c.table[c].tok_begin);
    const int pair = static_cast<int>(c * d.Hv + h);  // rows of T and S^T fit the int32 boxes
    if (it >= 1) fused::mbarrier_wait_parity(sm.empty_a(), released);
    uint64_t* bar = sm.full_a();
    fused::mbarrier_arrive_expect_tx(bar, FusedSmem::kTxA);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = 64 * half;
      fused::tma_load_3d(sm.q().at(0, col), &p.c.tmap_q, col, hk, tok, bar);
      fused::tma_load_3d(sm.v().at(0, col), &p.tmap_v, col, h, tok, bar);
      fused::tma_load_3d(sm.d_o().at(0, col), &p.c.tmap_do, col, h, tok, bar);
      fused::tma_load_2d(sm.s().at(0, col), &p.tmap_s, col, pair * kV, bar);
    }
    if (it >= 1) fused::mbarrier_wait_parity(sm.empty_b(), released);
    bar = sm.full_b();
    fused::mbarrier_arrive_expect_tx(bar, FusedSmem::kTxB);
#pragma unroll
    for (int half = 0; half < 2; ++half)
      fused::tma_load_3d(sm.k().at(0, 64 * half), &p.c.tmap_k, 64 * half, hk, tok, bar);
    fused::tma_load_2d(sm.t().p, &p.c.tmap_t, 0, pair * kC, bar);
    fused::bulk_load(sm.gate(), p.c.gate_ef + int64_t(pair) * (3 * kC),
                     static_cast<uint32_t>(FusedSmem::kGateBytes), bar);
    if (p.published && it >= 2) publish_chunk(p, c + 2, h);
    if (c - 1 >= first) prefetch_chunk(p, c - 1, h, hk);
  }
  if (p.published && last - first >= 2) {
    fused::mbarrier_wait_parity(sm.empty_a(), static_cast<uint32_t>((last - first - 1) % 2));
    publish_chunk(p, first + 1, h);
  }
}

// threadIdx.x read anew (volatile): the roles' own reads of it do not reuse this one, which
// would keep it in a register (spilled under the producer's 24) across the role split.
__device__ __forceinline__ int cta_thread() {
  int x;
  asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(x));
  return x;
}

template <class Elem>
__global__ void __launch_bounds__(kFusedThreads, 1)
    fused_bwd_kernel(const __grid_constant__ FusedBwdParams p) {
  // Beside the group sum: it may launch once every CTA of this grid runs, so that the chunks
  // it waits for always come (grid_dependency.cuh).
  if (p.published) allow_dependents_to_launch();
  {
    ChainItem ch;  // each role forms its own after the split (its fields would hold registers)
    if (!chain_item(p.c, kV, ch)) return;
  }
  extern __shared__ __align__(1024) char smem_raw[];  // wgmma operand tiles: 1024-byte aligned
  const FusedSmem sm{smem_raw};
  const int thread = cta_thread();
  if (thread == 0) {
    fused::mbarrier_init(sm.full_a(), 1);
    fused::mbarrier_init(sm.empty_a(), kFusedMathWarps);
    fused::mbarrier_init(sm.full_b(), 1);
    fused::mbarrier_init(sm.empty_b(), kFusedMathWarps);
    fused::fence_mbarrier_init();
  }
  __syncthreads();  // the last CTA-wide barrier: the roles part below
  const int wg = thread / 128;
  // Each role returns from its own branch: the branches never merge again, so each runs under
  // its own setmaxnreg count.
  if (wg == kFusedStateWg) {
    fused::setmaxnreg_inc<kFusedStateRegs>();
    fused_state_wg<Elem>(p, sm);
    return;
  }
  if (wg == kFusedChainWg) {
    fused::setmaxnreg_inc<kFusedChainRegs>();
    fused_chain_wg<Elem>(p, sm);
    return;
  }
  if (wg == kFusedLocalWg) {
    fused::setmaxnreg_inc<kFusedLocalRegs>();
    fused_local_wg<Elem>(p, sm);
    return;
  }
  fused::setmaxnreg_dec<kFusedProducerRegs>();
  if (threadIdx.x % 128 == 0) produce_chunks(p, sm);
}

template <class Elem>
cudaError_t launch_typed(const FusedBwdParams& p, int64_t items, cudaStream_t stream) {
  const auto kernel = fused_bwd_kernel<Elem>;
  const size_t smem = FusedSmem::bytes();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(items), static_cast<unsigned>(p.c.d.Hv), 1);
  kernel<<<grid, kFusedThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fused_bwd(const FusedBwdParams& p, int64_t items, cudaStream_t stream) {
  if (items == 0 || p.c.d.Hv == 0) return cudaSuccess;
  return p.c.d.in_bf16 ? launch_typed<__nv_bfloat16>(p, items, stream)
                       : launch_typed<__half>(p, items, stream);
}

const void* fused_bwd_symbol(bool bf16) {
  return bf16 ? reinterpret_cast<const void*>(fused_bwd_kernel<__nv_bfloat16>)
              : reinterpret_cast<const void*>(fused_bwd_kernel<__half>);
}

}  // namespace gdn::bwd
