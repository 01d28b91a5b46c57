// The fp32 repair of a sequence's short last chunk (see short_chunk.cuh and
// short_chunk_math.hpp): 256 threads, the group's value heads in order.
#include "short_chunk.cuh"

#include "arch/launch_smem.cuh"
#include "short_chunk_math.hpp"

namespace gdn::bwd {
namespace {

namespace sc = short_chunk;
constexpr int kThreads = 256;

// The math's executor on one CTA: loops spread over the threads, each step ended by a barrier.
struct BlockExec {
  float* partial;  // kThreads floats for sum()
  template <class F>
  __device__ void each(int n, F f) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) f(i);
    __syncthreads();
  }
  template <class F>
  __device__ void single(F f) {
    if (threadIdx.x == 0) f();
    __syncthreads();
  }
  // Fixed order: thread t sums i = t, t + blockDim, ...; thread 0 then sums the partials in order.
  template <class F>
  __device__ float sum(int n, F f) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) acc += f(i);
    partial[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      float total = 0.f;
      for (int t = 0; t < static_cast<int>(blockDim.x); ++t) total += partial[t];
      partial[0] = total;
    }
    __syncthreads();
    const float total = partial[0];
    __syncthreads();  // partial is free again
    return total;
  }
};

struct ShortSmem {
  sc::GroupWork group;
  sc::HeadWork head;
  float partial[kThreads];
};

__device__ __forceinline__ float load16(const uint16_t* p, int64_t i, bool bf16) {
  return staged::load_in(p, i, bf16);
}

__global__ void __launch_bounds__(kThreads) short_chunk_kernel(ShortChunkParams p) {
  const Dims& d = p.d;
  const int64_t n = blockIdx.x;
  const int64_t first = p.chunk_first[n], end = p.chunk_first[n + 1];
  if (end <= first) return;  // an empty sequence
  const int64_t chunk = end - 1;
  const ChunkInfo ci = p.table[chunk];
  if (ci.len == 0 || ci.len >= kSplitDagRows) return;
  const bool starts_sequence = chunk == first;
  const int L = ci.len, kh = blockIdx.y;
  extern __shared__ __align__(16) char smem_raw[];
  ShortSmem& sm = *reinterpret_cast<ShortSmem*>(smem_raw);
  BlockExec x{sm.partial};
  sc::GroupWork& gw = sm.group;
  sc::HeadWork& hw = sm.head;

  x.each(L * sc::kDim, [&](int i) {
    const int r = i / sc::kDim, c = i % sc::kDim;
    const int64_t off = ((ci.tok_begin + r) * d.Hk + kh) * sc::kDim + c;
    gw.q[r][c] = staged::load_in(p.q, off, d.in_bf16);
    gw.k[r][c] = staged::load_in(p.k, off, d.in_bf16);
    gw.dq[r][c] = gw.dk[r][c] = 0.f;
  });
  for (int hi = 0; hi < d.group; ++hi) {
    const int h = kh * d.group + hi;
    x.each(L * sc::kDim, [&](int i) {
      const int r = i / sc::kDim, c = i % sc::kDim;
      const int64_t off = ((ci.tok_begin + r) * d.Hv + h) * sc::kDim + c;
      hw.w[r][c] = staged::load_in(p.v, off, d.in_bf16);
      hw.d_o[r][c] = staged::load_in(p.d_o, off, d.in_bf16);
      if (c == 0) {
        hw.gam[r] = p.gcum[(ci.tok_begin + r) * d.Hv + h];
        hw.beta[r] = staged::load_beta(p.beta, (ci.tok_begin + r) * d.Hv + h, d);
      }
    });
    // S: the caller's h0 where the chunk starts the sequence (0 without one), else the
    // recompute's 16-bit S^T; dS' = dht (0 without one).
    const uint16_t* st = p.states16 + (chunk * d.Hv + h) * int64_t(sc::kDim * sc::kDim);
    const auto S = [&](int kk, int j) -> float {
      if (starts_sequence) return p.h0 ? p.h0[staged::state_index(d, n, h, kk, j)] : 0.f;
      return load16(st, int64_t(j) * sc::kDim + kk, d.in_bf16);
    };
    const auto dS = [&](int kk, int j) -> float {
      return p.dht ? p.dht[staged::state_index(d, n, h, kk, j)] : 0.f;
    };
    const auto dh0 = [&](int kk, int j, float value) {
      p.dh0[staged::state_index(d, n, h, kk, j)] = value;
    };
    sc::head_backward(x, gw, hw, L, d.scale, S, dS, starts_sequence && p.dh0 != nullptr, dh0);
    x.each(L * sc::kDim, [&](int i) {
      const int r = i / sc::kDim, c = i % sc::kDim;
      const int64_t tok = ci.tok_begin + r;
      staged::store_in(p.dv, (tok * d.Hv + h) * sc::kDim + c, hw.dw[r][c], d.in_bf16);
      if (c == 0) {
        p.dg[tok * d.Hv + h] = hw.dg[r];
        staged::store_beta(p.dbeta, tok * d.Hv + h, hw.dbeta[r], d);
      }
    });
  }
  x.each(L * sc::kDim, [&](int i) {
    const int r = i / sc::kDim, c = i % sc::kDim;
    const int64_t off = ((ci.tok_begin + r) * d.Hk + kh) * sc::kDim + c;
    staged::store_in(p.dq, off, gw.dq[r][c], d.in_bf16);
    staged::store_in(p.dk, off, gw.dk[r][c], d.in_bf16);
  });
}

}  // namespace

cudaError_t launch_short_chunk_repair(const ShortChunkParams& p, cudaStream_t stream) {
  if (p.d.num_seqs == 0) return cudaSuccess;
  const size_t smem = sizeof(ShortSmem);
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(short_chunk_kernel), smem);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.d.num_seqs), static_cast<unsigned>(p.d.Hk));
  short_chunk_kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn::bwd
