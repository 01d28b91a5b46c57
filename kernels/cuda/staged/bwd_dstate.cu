// Backward stage 1: the reverse state-gradient recurrence. One CTA per (sequence, v-head,
// V-block of BV columns), 256 threads, walking the chunks from last to first with
// dS (128 x BV, fp32, shared memory) = gradient of the current chunk's end state, starting
// from dht (or zero). Per chunk:
//   dstate_end[chunk] = dS
//   P    = (Q K^T) o Gam o causal                     tile 64 x 64, depth 128
//   dVn  = scale P^T dO + diag(f) K dS                tile 64 x BV, depths 64 and 128 -> dvnew
//   dW'  = (T diag(beta))^T dVn                       tile 64 x BV, depth 64    -> dw, dv
//   dS   = e_last dS + scale Q^T diag(e) dO - K^T diag(e) dW'   tile 128 x BV, depth 2 x 64
// After the first chunk dS is the gradient of the initial state: dh0 (either layout).
#include "common/block_tile.cuh"
#include "common/chunk_math.cuh"
#include "staged/kernels.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = kStateKernelThreads;

template <int BV>
struct DStateSmem {
  SmemMat ds, q, k, t, pm, d_o, dvn, dw;  // 128xBV, 64x128 (x2), 64x64 (x2), 64xBV (x3)
  GateVectors* gv;
  __host__ __device__ static DStateSmem carve(SmemCarver& c) {
    DStateSmem m;
    m.ds = {c.take(kK * (BV + 1)), BV + 1};
    m.q = {c.take(kC * (kK + 1)), kK + 1};
    m.k = {c.take(kC * (kK + 1)), kK + 1};
    m.t = {c.take(kC * (kC + 1)), kC + 1};
    m.pm = {c.take(kC * (kC + 1)), kC + 1};
    m.d_o = {c.take(kC * (BV + 1)), BV + 1};
    m.dvn = {c.take(kC * (BV + 1)), BV + 1};
    m.dw = {c.take(kC * (BV + 1)), BV + 1};
    m.gv = reinterpret_cast<GateVectors*>(c.take(sizeof(GateVectors) / sizeof(float) + 1));
    return m;
  }
};

template <int BV>
size_t dstate_smem_bytes() {
  SmemCarver c{nullptr};
  DStateSmem<BV>::carve(c);
  return c.used;
}

template <int BV>
__global__ void __launch_bounds__(kThreads, 1) dstate_bwd_kernel(BwdParams p) {
  const FwdParams& f = p.f;
  const Dims& d = f.d;
  const int64_t n = blockIdx.x;
  const int h = blockIdx.y;
  const int v0 = blockIdx.z * BV;
  extern __shared__ __align__(16) char smem_raw[];
  SmemCarver carver{smem_raw};
  const DStateSmem<BV> m = DStateSmem<BV>::carve(carver);
  GateVectors& gv = *m.gv;

  block_for(kK * BV, [&](int e) {
    const int kk = e / BV, vv = e % BV;
    m.ds(kk, vv) = p.dht ? p.dht[state_index(d, n, h, kk, v0 + vv)] : 0.f;
  });

  const int64_t first = f.ws.chunk_first[n], last = f.ws.chunk_first[n + 1];
  for (int64_t chunk = last - 1; chunk >= first; --chunk) {
    const ChunkInfo ci = f.ws.table[chunk];
    __syncthreads();  // previous chunk's dS update is complete
    load_rows_128(m.q, f.q, ci, d.Hk, k_head(d, h), d.in_bf16);
    load_rows_128(m.k, f.k, ci, d.Hk, k_head(d, h), d.in_bf16);
    const float* t_in = f.ws.tmat + (chunk * d.Hv + h) * (kC * kC);
    block_for(kC * kC, [&](int e) { m.t(e / kC, e % kC) = t_in[e]; });
    block_for(kC * BV, [&](int e) {
      const int r = e / BV, c = e % BV;
      m.d_o(r, c) =
          r < ci.len ? load_in(p.d_o, ((ci.tok_begin + r) * d.Hv + h) * kV + v0 + c, d.in_bf16) : 0.f;
    });
    float* ds_out = p.dstate_end + chunk_state_index(chunk, d.Hv, h);
    block_for(kK * BV, [&](int e) {
      const int kk = e / BV, vv = e % BV;
      ds_out[kk * kV + v0 + vv] = m.ds(kk, vv);
    });
    load_gates(gv, f.ws.gcum, f.beta, ci, h, d);
    __syncthreads();

    // P = (Q K^T) o Gam, causal                  tile 64 x 64, depth 128
    BlockTile<kC, kC, kThreads> pm;
    pm.zero();
    pm.mma(kK, [&](int i, int c) { return m.q(i, c); }, [&](int c, int j) { return m.k(j, c); });
    pm.each([&](int i, int j, float& a) { m.pm(i, j) = a * causal_gate(gv, i, j); });
    __syncthreads();

    // dVn = scale P^T dO + diag(f) K dS           tile 64 x BV
    BlockTile<kC, BV, kThreads> dvn;
    dvn.zero();
    dvn.mma(kC, [&](int i, int c) { return m.pm(c, i); }, [&](int c, int j) { return m.d_o(c, j); });
    dvn.each([&](int, int, float& a) { a *= d.scale; });
    dvn.mma(kK, [&](int i, int c) { return m.k(i, c) * gv.f[i]; },
            [&](int c, int j) { return m.ds(c, j); });
    dvn.each([&](int i, int j, float& a) {
      m.dvn(i, j) = a;
      if (i < ci.len) p.dvnew[((ci.tok_begin + i) * d.Hv + h) * kV + v0 + j] = a;
    });
    __syncthreads();

    // dW' = (T diag(beta))^T dVn                  tile 64 x BV, depth 64; dv = dW'
    BlockTile<kC, BV, kThreads> dw;
    dw.zero();
    dw.mma(kC, [&](int i, int c) { return m.t(c, i) * gv.beta[i]; },
           [&](int c, int j) { return m.dvn(c, j); });
    dw.each([&](int i, int j, float& a) {
      m.dw(i, j) = a;
      if (i < ci.len) {
        const int64_t idx = ((ci.tok_begin + i) * d.Hv + h) * kV + v0 + j;
        p.dw[idx] = a;
        store_in(p.dv, idx, a, d.in_bf16);
      }
    });
    __syncthreads();

    // dS = e_last dS + scale Q^T diag(e) dO - K^T diag(e) dW'    tile 128 x BV
    BlockTile<kK, BV, kThreads> su;
    su.zero();
    su.mma(kC, [&](int i, int c) { return m.q(c, i) * gv.e[c] * d.scale; },
           [&](int c, int j) { return m.d_o(c, j); });
    su.mma(kC, [&](int i, int c) { return -m.k(c, i) * gv.e[c]; },
           [&](int c, int j) { return m.dw(c, j); });
    su.each([&](int i, int j, float& a) { m.ds(i, j) = gv.e_last * m.ds(i, j) + a; });
  }
  __syncthreads();
  if (p.dh0) {
    block_for(kK * BV, [&](int e) {
      const int kk = e / BV, vv = e % BV;
      p.dh0[state_index(d, n, h, kk, v0 + vv)] = m.ds(kk, vv);
    });
  }
}

template <int BV>
cudaError_t launch(const BwdParams& p, cudaStream_t stream) {
  const size_t smem = dstate_smem_bytes<BV>();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(dstate_bwd_kernel<BV>), smem);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.f.d.num_seqs), p.f.d.Hv, kV / BV);
  dstate_bwd_kernel<BV><<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_dstate_bwd(const BwdParams& p, int block_v, cudaStream_t stream) {
  switch (block_v) {
    case 32: return launch<32>(p, stream);
    case 64: return launch<64>(p, stream);
    default: return cudaErrorInvalidValue;
  }
}

const void* dstate_bwd_kernel_symbol(int block_v) {
  switch (block_v) {
    case 32: return reinterpret_cast<const void*>(dstate_bwd_kernel<32>);
    case 64: return reinterpret_cast<const void*>(dstate_bwd_kernel<64>);
    default: return nullptr;
  }
}

size_t dstate_bwd_smem(int block_v) {
  switch (block_v) {
    case 32: return dstate_smem_bytes<32>();
    case 64: return dstate_smem_bytes<64>();
    default: return 0;
  }
}

}  // namespace gdn::staged
