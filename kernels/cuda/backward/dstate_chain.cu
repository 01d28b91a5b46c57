// Launches of the reverse state-gradient chain (dstate_chain.cuh), per V-block width.
#include "bwd_chain_launch.cuh"
#include "dstate_chain.cuh"

namespace gdn::bwd {
namespace {

template <int BV, class Elem>
cudaError_t launch_typed(const ChainParams& p, unsigned items, unsigned col_blocks,
                         cudaStream_t stream) {
  const size_t smem = ChainSmem<BV>::bytes();
  const cudaError_t err = opt_into_shared_memory(
      reinterpret_cast<const void*>(dstate_chain_kernel<BV, Elem>), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(items, static_cast<unsigned>(p.d.Hv), col_blocks);
  dstate_chain_kernel<BV, Elem><<<grid, kChainThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

template <int BV>
cudaError_t launch_bv(const ChainParams& p, int64_t items, int state_cols, cudaStream_t stream) {
  const auto n = static_cast<unsigned>(items);
  const auto cols = static_cast<unsigned>(state_cols / BV);
  return p.d.in_bf16 ? launch_typed<BV, __nv_bfloat16>(p, n, cols, stream)
                     : launch_typed<BV, __half>(p, n, cols, stream);
}

}  // namespace

cudaError_t launch_dstate_chain(const ChainParams& p, int block_v, int64_t items, int state_cols,
                                cudaStream_t stream) {
  switch (block_v) {
    case 16: return launch_bv<16>(p, items, state_cols, stream);
    case 32: return launch_bv<32>(p, items, state_cols, stream);
    default: return cudaErrorInvalidValue;
  }
}

const void* chain_symbol(int block_v, bool bf16) {
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

size_t chain_smem_bytes(int block_v) {
  switch (block_v) {
    case 16: return ChainSmem<16>::bytes();
    case 32: return ChainSmem<32>::bytes();
    default: return 0;
  }
}

}  // namespace gdn::bwd
