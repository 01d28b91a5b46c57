// The reverse chain's inputs that do not depend on dS, for every (chunk, v-head) in parallel:
// one CTA of 4 warps per (chunk, v-head), warp w owning chunk rows 16w .. 16w + 15 and state
// rows 32w .. 32w + 31. With e = exp(gamma) and P^T = (K Q^T) o Gam^T (anti-causal: P^T[i][j]
// = (k_i . q_j) exp(gamma_j - gamma_i) for j >= i):
//   dVin = scale P^T dO     (64 x 128, depth 64; P^T depth 128)  -> dvin16  [Ttot, Hv, V]
//   Xq   = scale Q^T diag(e) dO (128 x 128, depth 64)            -> xq16 [chunk, Hv, K, V]
// The chain then runs only the three products that depend on dS (dstate_chain.cuh).
#include "chain_inputs.cuh"
#include "arch/mma.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::bwd {
namespace {

using fused::load_a;
using fused::load_a_trans;
using fused::load_b_kn;
using fused::load_b_nk;
using fused::SmemTile16;

constexpr int kThreads = 128;

struct InputsSmem {
  static constexpr size_t kTileBytes = size_t(kC) * fused::kLdQK * 2;  // 64 x 128, padded
  static constexpr size_t bytes() { return 4 * kTileBytes + kC * sizeof(float); }
  char* base;
  __device__ __forceinline__ SmemTile16 tile(int i) const {  // 0 q, 1 k, 2 dO, 3 E
    return {reinterpret_cast<uint16_t*>(base + i * kTileBytes), fused::kLdQK};
  }
  __device__ __forceinline__ float* gam() const {
    return reinterpret_cast<float*>(base + 4 * kTileBytes);
  }
};

template <class Elem>
__global__ void __launch_bounds__(kThreads) chain_inputs_kernel(ChainInputsParams p) {
  using Ops = fused::ElemOps<Elem>;
  const Dims& d = p.d;
  const int64_t chunk = blockIdx.x;
  const ChunkInfo ci = p.table[chunk];
  if (ci.len == 0) return;
  const int h = blockIdx.y, kh = h / d.group;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  extern __shared__ __align__(128) char smem_raw[];
  const InputsSmem sm{smem_raw};
  const SmemTile16 sQ = sm.tile(0), sK = sm.tile(1), sO = sm.tile(2), sE = sm.tile(3);
  float* gam = sm.gam();

  for (int e = threadIdx.x; e < kC * (kK / 8); e += kThreads) {
    const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
    const bool valid = r < ci.len;
    const int64_t row = ci.tok_begin + (valid ? r : 0);
    fused::cp_async_16(sQ.at(r, c), static_cast<const Elem*>(p.q) + (row * d.Hk + kh) * kK + c,
                       valid ? 16 : 0);
    fused::cp_async_16(sK.at(r, c), static_cast<const Elem*>(p.k) + (row * d.Hk + kh) * kK + c,
                       valid ? 16 : 0);
    fused::cp_async_16(sO.at(r, c), static_cast<const Elem*>(p.d_o) + (row * d.Hv + h) * kV + c,
                       valid ? 16 : 0);
  }
  fused::cp_async_commit();
  if (threadIdx.x < kC) {
    const int r = threadIdx.x, rr = r < ci.len ? r : ci.len - 1;
    gam[r] = p.gcum[(ci.tok_begin + rr) * d.Hv + h];
  }
  fused::cp_async_wait(0);
  __syncthreads();
  // E = scale diag(e) dO (16-bit), the B operand of Xq.
  for (int e = threadIdx.x; e < kC * (kV / 2); e += kThreads) {
    const int r = e / (kV / 2), c = (e % (kV / 2)) * 2;
    const float w = d.scale * expf(gam[r]);
    const float2 o = Ops::unpack(sO.pair(r, c));
    sE.pair(r, c) = Ops::pack(w * o.x, w * o.y);
  }

  // P^T for this warp's 16 key rows (depth 128), gated, as A fragments.
  const int r0 = 16 * warp, ra = r0 + g, rb = ra + 8;
  float PT[kC / 8][4] = {};
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t aK[4];
    load_a(aK, sK, r0, 16 * kk);
#pragma unroll
    for (int np = 0; np < kC / 16; ++np) {
      uint32_t b[4];
      load_b_nk(b, sQ, 16 * kk, 16 * np);
      Ops::mma(PT[2 * np], aK, b[0], b[1]);
      Ops::mma(PT[2 * np + 1], aK, b[2], b[3]);
    }
  }
  const float ga = gam[ra], gb = gam[rb];
  uint32_t pa[kC / 16][4];
#pragma unroll
  for (int nj = 0; nj < kC / 8; ++nj) {
    const int j0 = 8 * nj + 2 * t;
    const float gj0 = gam[j0], gj1 = gam[j0 + 1];
    PT[nj][0] = j0 >= ra ? PT[nj][0] * expf(gj0 - ga) : 0.f;
    PT[nj][1] = j0 + 1 >= ra ? PT[nj][1] * expf(gj1 - ga) : 0.f;
    PT[nj][2] = j0 >= rb ? PT[nj][2] * expf(gj0 - gb) : 0.f;
    PT[nj][3] = j0 + 1 >= rb ? PT[nj][3] * expf(gj1 - gb) : 0.f;
  }
#pragma unroll
  for (int kk = 0; kk < kC / 16; ++kk) {
    pa[kk][0] = Ops::pack(PT[2 * kk][0], PT[2 * kk][1]);
    pa[kk][1] = Ops::pack(PT[2 * kk][2], PT[2 * kk][3]);
    pa[kk][2] = Ops::pack(PT[2 * kk + 1][0], PT[2 * kk + 1][1]);
    pa[kk][3] = Ops::pack(PT[2 * kk + 1][2], PT[2 * kk + 1][3]);
  }
  // dVin = scale P^T dO, 32 columns at a time.
  uint32_t* dvin = reinterpret_cast<uint32_t*>(p.dvin16);
#pragma unroll
  for (int cb = 0; cb < kV / 32; ++cb) {
    float acc[4][4] = {};
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk)
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        uint32_t b[4];
        load_b_kn(b, sO, 16 * kk, 32 * cb + 16 * np);
        Ops::mma(acc[2 * np], pa[kk], b[0], b[1]);
        Ops::mma(acc[2 * np + 1], pa[kk], b[2], b[3]);
      }
#pragma unroll
    for (int nj = 0; nj < 4; ++nj) {
      const int col = 32 * cb + 8 * nj + 2 * t;
      if (ra < ci.len)
        dvin[(((ci.tok_begin + ra) * d.Hv + h) * kV + col) / 2] =
            Ops::pack(d.scale * acc[nj][0], d.scale * acc[nj][1]);
      if (rb < ci.len)
        dvin[(((ci.tok_begin + rb) * d.Hv + h) * kV + col) / 2] =
            Ops::pack(d.scale * acc[nj][2], d.scale * acc[nj][3]);
    }
  }
  __syncthreads();  // E complete
  // Xq = Q^T E for this warp's 32 state rows, 32 columns at a time.
  uint32_t* xq = reinterpret_cast<uint32_t*>(p.xq16 + (chunk * d.Hv + h) * int64_t(kK * kV));
#pragma unroll 1
  for (int cb = 0; cb < kV / 32; ++cb) {
    float acc[2][4][4] = {};
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) {
      uint32_t aQt[2][4];
      load_a_trans(aQt[0], sQ, 32 * warp, 16 * kk);
      load_a_trans(aQt[1], sQ, 32 * warp + 16, 16 * kk);
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        uint32_t b[4];
        load_b_kn(b, sE, 16 * kk, 32 * cb + 16 * np);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          Ops::mma(acc[mi][2 * np], aQt[mi], b[0], b[1]);
          Ops::mma(acc[mi][2 * np + 1], aQt[mi], b[2], b[3]);
        }
      }
    }
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int row = 32 * warp + 16 * mi + g, col = 32 * cb + 8 * nj + 2 * t;
        xq[(row * kV + col) / 2] = Ops::pack(acc[mi][nj][0], acc[mi][nj][1]);
        xq[((row + 8) * kV + col) / 2] = Ops::pack(acc[mi][nj][2], acc[mi][nj][3]);
      }
  }
}

template <class Elem>
cudaError_t launch_typed(const ChainInputsParams& p, cudaStream_t stream) {
  const size_t smem = InputsSmem::bytes();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(chain_inputs_kernel<Elem>), smem);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.d.max_chunks), static_cast<unsigned>(p.d.Hv));
  chain_inputs_kernel<Elem><<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_chain_inputs(const ChainInputsParams& p, cudaStream_t stream) {
  if (p.d.max_chunks == 0) return cudaSuccess;
  return p.d.in_bf16 ? launch_typed<__nv_bfloat16>(p, stream) : launch_typed<__half>(p, stream);
}

}  // namespace gdn::bwd
