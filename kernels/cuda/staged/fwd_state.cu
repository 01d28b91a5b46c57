// Forward stage 2: the state recurrence. One CTA per (sequence, v-head, V-block of BV
// columns), 256 threads, walking the sequence's chunks in order with the fp32 state slice
// S (128 x BV) in shared memory. Per chunk (rows padded to 64 with zeros):
//   states[chunk] = S                                   (start state, fp32)
//   W'   = V - diag(e) (K S)          tile 64 x BV, depth 128
//   Vn   = T diag(beta) W'            tile 64 x BV, depth 64      -> vnew
//   S    = e_last S + K^T diag(f) Vn  tile 128 x BV, depth 64
// At the end the final state goes to ht (either layout). Zero-length sequences copy h0.
#include "common/block_tile.cuh"
#include "common/chunk_math.cuh"
#include "staged/kernels.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = kStateKernelThreads;

template <int BV>
struct StateSmem {
  SmemMat s, k, t, w, vn;  // 128 x BV, 64 x 128, 64 x 64, 64 x BV, 64 x BV
  GateVectors* gv;
  __host__ __device__ static StateSmem carve(SmemCarver& c) {
    StateSmem m;
    m.s = {c.take(kK * (BV + 1)), BV + 1};
    m.k = {c.take(kC * (kK + 1)), kK + 1};
    m.t = {c.take(kC * (kC + 1)), kC + 1};
    m.w = {c.take(kC * (BV + 1)), BV + 1};
    m.vn = {c.take(kC * (BV + 1)), BV + 1};
    m.gv = reinterpret_cast<GateVectors*>(c.take(sizeof(GateVectors) / sizeof(float) + 1));
    return m;
  }
};

template <int BV>
size_t state_smem_bytes() {
  SmemCarver c{nullptr};
  StateSmem<BV>::carve(c);
  return c.used;
}

template <int BV>
__global__ void __launch_bounds__(kThreads, 1) state_fwd_kernel(FwdParams p) {
  const Dims& d = p.d;
  const int64_t n = blockIdx.x;
  const int h = blockIdx.y;
  const int v0 = blockIdx.z * BV;
  extern __shared__ __align__(16) char smem_raw[];
  SmemCarver carver{smem_raw};
  const StateSmem<BV> m = StateSmem<BV>::carve(carver);
  GateVectors& gv = *m.gv;

  block_for(kK * BV, [&](int e) {
    const int kk = e / BV, vv = e % BV;
    m.s(kk, vv) = p.h0 ? p.h0[state_index(d, n, h, kk, v0 + vv)] : 0.f;
  });

  const int64_t first = p.ws.chunk_first[n], last = p.ws.chunk_first[n + 1];
  for (int64_t chunk = first; chunk < last; ++chunk) {
    const ChunkInfo ci = p.ws.table[chunk];
    __syncthreads();  // previous chunk's S update is complete
    load_rows_128(m.k, p.k, ci, d.Hk, k_head(d, h), d.in_bf16);
    const float* t_in = p.ws.tmat + (chunk * d.Hv + h) * (kC * kC);
    block_for(kC * kC, [&](int e) { m.t(e / kC, e % kC) = t_in[e]; });
    float* s_out = p.ws.states + chunk_state_index(chunk, d.Hv, h);
    block_for(kK * BV, [&](int e) {
      const int kk = e / BV, vv = e % BV;
      s_out[kk * kV + v0 + vv] = m.s(kk, vv);
    });
    load_gates(gv, p.ws.gcum, p.beta, ci, h, d);
    __syncthreads();

    // W' = V - diag(e) K S            tile 64 x BV, depth 128
    BlockTile<kC, BV, kThreads> w;
    w.zero();
    w.mma(kK, [&](int i, int c) { return m.k(i, c); }, [&](int c, int j) { return m.s(c, j); });
    w.each([&](int i, int j, float& a) {
      const float vin =
          i < ci.len ? load_in(p.v, ((ci.tok_begin + i) * d.Hv + h) * kV + v0 + j, d.in_bf16) : 0.f;
      m.w(i, j) = vin - gv.e[i] * a;
    });
    __syncthreads();

    // Vn = T diag(beta) W'             tile 64 x BV, depth 64
    BlockTile<kC, BV, kThreads> vn;
    vn.zero();
    vn.mma(kC, [&](int i, int c) { return m.t(i, c) * gv.beta[c]; },
           [&](int c, int j) { return m.w(c, j); });
    vn.each([&](int i, int j, float& a) {
      m.vn(i, j) = a;
      if (i < ci.len) p.ws.vnew[((ci.tok_begin + i) * d.Hv + h) * kV + v0 + j] = a;
    });
    __syncthreads();

    // S = e_last S + K^T diag(f) Vn    tile 128 x BV, depth 64
    BlockTile<kK, BV, kThreads> su;
    su.zero();
    su.mma(kC, [&](int i, int c) { return m.k(c, i) * gv.f[c]; },
           [&](int c, int j) { return m.vn(c, j); });
    su.each([&](int i, int j, float& a) { m.s(i, j) = gv.e_last * m.s(i, j) + a; });
  }
  __syncthreads();
  if (p.ht) {
    block_for(kK * BV, [&](int e) {
      const int kk = e / BV, vv = e % BV;
      p.ht[state_index(d, n, h, kk, v0 + vv)] = m.s(kk, vv);
    });
  }
}

template <int BV>
cudaError_t launch(const FwdParams& p, cudaStream_t stream) {
  const size_t smem = state_smem_bytes<BV>();
  cudaError_t err = cudaFuncSetAttribute(state_fwd_kernel<BV>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.d.num_seqs), p.d.Hv, kV / BV);
  state_fwd_kernel<BV><<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_state_fwd(const FwdParams& p, int block_v, cudaStream_t stream) {
  switch (block_v) {
    case 32: return launch<32>(p, stream);
    case 64: return launch<64>(p, stream);
    case 128: return launch<128>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

const void* state_fwd_kernel_symbol(int block_v) {
  switch (block_v) {
    case 32: return reinterpret_cast<const void*>(state_fwd_kernel<32>);
    case 64: return reinterpret_cast<const void*>(state_fwd_kernel<64>);
    case 128: return reinterpret_cast<const void*>(state_fwd_kernel<128>);
    default: return nullptr;
  }
}

size_t state_fwd_smem(int block_v) {
  switch (block_v) {
    case 32: return state_smem_bytes<32>();
    case 64: return state_smem_bytes<64>();
    case 128: return state_smem_bytes<128>();
    default: return 0;
  }
}

}  // namespace gdn::staged
