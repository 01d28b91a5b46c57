// Launches of the reverse state-gradient chain: 4 warps on mma.sync (dstate_chain.cuh,
// cooperative roles, 16 or 32 columns) or a warpgroup on wgmma fed by a TMA producer warp
// (dstate_chain_wg.cuh, column-warp roles, 64 columns); and the chain kernels' symbols, shared
// memory and threads per role (producer-consumer roles: the fused kernel, fused_bwd.cuh).
#include "bwd_chain_launch.cuh"
#include "dstate_chain.cuh"
#include "dstate_chain_wg.cuh"
#include "fused_bwd.cuh"

namespace gdn::bwd {
namespace {

template <int BV, class Elem>
cudaError_t launch_mma(const ChainParams& p, unsigned items, unsigned col_blocks,
                       cudaStream_t stream) {
  const size_t smem = ChainSmem<BV>::bytes();
  const cudaError_t err = opt_into_shared_memory(
      reinterpret_cast<const void*>(dstate_chain_kernel<BV, Elem>), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(items, static_cast<unsigned>(p.d.Hv), col_blocks);
  dstate_chain_kernel<BV, Elem><<<grid, kChainThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <class Elem, bool kPublish>
cudaError_t launch_wg_instance(const ChainParams& p, unsigned items, unsigned col_blocks,
                      cudaStream_t stream) {
  const auto kernel = dstate_chain_wg_kernel<Elem, kPublish>;
  const size_t smem = ChainWgSmem::bytes();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(items, static_cast<unsigned>(p.d.Hv), col_blocks);
  kernel<<<grid, kChainWgThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

// The wgmma chain's instance: publishing chunk counts when the local kernel runs beside it.
template <class Elem>
cudaError_t launch_wg(const ChainParams& p, unsigned items, unsigned col_blocks,
                      cudaStream_t stream) {
  if (p.ready && !p.transition) return launch_wg_instance<Elem, true>(p, items, col_blocks, stream);
  return launch_wg_instance<Elem, false>(p, items, col_blocks, stream);
}

}  // namespace

cudaError_t launch_dstate_chain(const ChainParams& p, WarpRoles roles, int block_v,
                                int64_t items, cudaStream_t stream) {
  const auto n = static_cast<unsigned>(items);
  if (block_v <= 0 || kV % block_v != 0) return cudaErrorInvalidValue;
  const auto cols = static_cast<unsigned>(kV / block_v);
  const bool bf16 = p.d.in_bf16;
  if (roles == WarpRoles::ColumnWarps) {
    if (block_v != kChainWgBV) return cudaErrorInvalidValue;
    return bf16 ? launch_wg<__nv_bfloat16>(p, n, cols, stream) : launch_wg<__half>(p, n, cols, stream);
  }
  switch (block_v) {
    case 16: return bf16 ? launch_mma<16, __nv_bfloat16>(p, n, cols, stream)
                         : launch_mma<16, __half>(p, n, cols, stream);
    case 32: return bf16 ? launch_mma<32, __nv_bfloat16>(p, n, cols, stream)
                         : launch_mma<32, __half>(p, n, cols, stream);
    default: return cudaErrorInvalidValue;
  }
}

const void* chain_symbol(WarpRoles roles, int block_v, bool bf16) {
  if (roles == WarpRoles::ProducerConsumer) return block_v == kFusedBV ? fused_bwd_symbol(bf16) : nullptr;
  if (roles == WarpRoles::ColumnWarps)
    return block_v != kChainWgBV ? nullptr
           : bf16              ? reinterpret_cast<const void*>(dstate_chain_wg_kernel<__nv_bfloat16, false>)
                               : reinterpret_cast<const void*>(dstate_chain_wg_kernel<__half, false>);
  switch (block_v) {
    case 16:
      return bf16 ? reinterpret_cast<const void*>(dstate_chain_kernel<16, __nv_bfloat16>)
                  : reinterpret_cast<const void*>(dstate_chain_kernel<16, __half>);
    case 32:
      return bf16 ? reinterpret_cast<const void*>(dstate_chain_kernel<32, __nv_bfloat16>)
                  : reinterpret_cast<const void*>(dstate_chain_kernel<32, __half>);
    default: return nullptr;
  }
}

size_t chain_smem_bytes(WarpRoles roles, int block_v) {
  if (roles == WarpRoles::ProducerConsumer) return block_v == kFusedBV ? fused_bwd_smem_bytes() : 0;
  if (roles == WarpRoles::ColumnWarps) return block_v == kChainWgBV ? ChainWgSmem::bytes() : 0;
  switch (block_v) {
    case 16: return ChainSmem<16>::bytes();
    case 32: return ChainSmem<32>::bytes();
    default: return 0;
  }
}

int chain_threads(WarpRoles roles) {
  switch (roles) {
    case WarpRoles::ColumnWarps: return kChainWgThreads;
    case WarpRoles::ProducerConsumer: return kFusedThreads;
    default: return kChainThreads;
  }
}

}  // namespace gdn::bwd
