// Forward stage 1, one CTA per (chunk, v-head), 256 threads:
//   gamma = chunk-local cumsum of g                       -> gcum [Ttot, Hv]
//   N  = StrictLower(diag(beta) K K^T)        (64 x 64, reduce over K = 128; tensor cores:
//                                              16-bit k, exact products, fp32 accumulation)
//   A0 = (I + N)^-1                            gate-free, fp32 (chunk_math.cuh)
//   T  = Gam o A0 = D A0 D^-1                  -> tmat [chunk, Hv, 64, 64] (fp32, staged)
//   T diag(beta) in the input dtype            -> tbeta16 [chunk, Hv, 64, 64] (fused)
// T depends only on k, beta and g, so the backward reuses this kernel unchanged.
#include "block_tile.cuh"
#include "chunk_math.cuh"
#include "fused_mma.cuh"  // the mma.sync / ldmatrix wrappers (shared with the fused family)
#include "staged_kernels.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = 256;  // 8 warps
constexpr int kLdK16 = kK + 8;  // 16-bit k rows, padded 16 bytes: ldmatrix without conflicts

struct PrepareSmem {
  uint16_t* k16;             // 64 x 128 (16-bit, stride kLdK16)
  SmemMat n, x, scratch;     // 64 x 64 (x3)
  float* g;                  // 64
  float* beta;               // 64
  __host__ __device__ static PrepareSmem carve(SmemCarver& c) {
    PrepareSmem s;
    s.k16 = reinterpret_cast<uint16_t*>(c.take(kC * kLdK16 / 2));
    s.n = {c.take(kC * (kC + 1)), kC + 1};
    s.x = {c.take(kC * (kC + 1)), kC + 1};
    s.scratch = {c.take(kC * (kC + 1)), kC + 1};
    s.g = c.take(kC);
    s.beta = c.take(kC);
    return s;
  }
};

// N = StrictLower(diag(beta) K K^T) on the tensor cores. Warp w computes the 16 x 32 tile at
// rows 16 (w % 4), columns 32 (w / 4) (4 n-tiles of 8; depth 128 in 8 steps of 16); the two
// tiles wholly above the diagonal skip the products and write zeros.
template <class Elem>
__device__ void strict_lower_kkt(const uint16_t* k16, SmemMat n, const float* beta) {
  using Ops = fused::ElemOps<Elem>;
  const fused::SmemTile16 k{const_cast<uint16_t*>(k16), kLdK16};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int r0 = 16 * (warp % 4), c0 = 32 * (warp / 4);
  float acc[4][4] = {};
  if (c0 < r0 + 16) {
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) {
      uint32_t a[4];
      fused::load_a(a, k, r0, 16 * kk);
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        uint32_t b[4];
        fused::load_b_nk(b, k, 16 * kk, c0 + 16 * np);
        Ops::mma(acc[2 * np], a, b[0], b[1]);
        Ops::mma(acc[2 * np + 1], a, b[2], b[3]);
      }
    }
  }
#pragma unroll
  for (int nj = 0; nj < 4; ++nj)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = r0 + g + (e >= 2 ? 8 : 0), col = c0 + 8 * nj + 2 * t + (e & 1);
      n(row, col) = row > col ? beta[row] * acc[nj][e] : 0.f;
    }
}

size_t prepare_smem_bytes() {
  SmemCarver c{nullptr};
  PrepareSmem::carve(c);
  return c.used;
}

__global__ void __launch_bounds__(kThreads) prepare_kernel(FwdParams p) {
  const ChunkInfo ci = p.ws.table[blockIdx.x];
  if (ci.len == 0) return;
  const int h = blockIdx.y;
  const Dims& d = p.d;
  extern __shared__ __align__(16) char smem_raw[];
  SmemCarver carver{smem_raw};
  const PrepareSmem s = PrepareSmem::carve(carver);

  // k rows as they are (16-bit, 16 bytes per copy); rows >= len zero, so they drop out.
  const uint16_t* k_in = static_cast<const uint16_t*>(p.k);
  block_for(kC * (kK / 8), [&](int e) {
    const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (r < ci.len)
      v = *reinterpret_cast<const uint4*>(k_in + ((ci.tok_begin + r) * d.Hk + k_head(d, h)) * kK + c);
    *reinterpret_cast<uint4*>(s.k16 + r * kLdK16 + c) = v;
  });
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    const int64_t gi = (ci.tok_begin + r) * d.Hv + h;
    s.g[r] = r < ci.len ? p.g[gi] : 0.f;
    s.beta[r] = r < ci.len ? load_beta(p.beta, gi, d) : 0.f;
  }
  __syncthreads();
  chunk_cumsum_warp0(s.g, s.g);

  // N(i, j) = beta_i k_i . k_j for i > j.    tile 64 x 64, depth 128
  if (d.in_bf16)
    strict_lower_kkt<__nv_bfloat16>(s.k16, s.n, s.beta);
  else
    strict_lower_kkt<__half>(s.k16, s.n, s.beta);
  __syncthreads();

  invert_unit_lower_64(s.n, s.x, s.scratch);

  if (threadIdx.x < ci.len) p.ws.gcum[(ci.tok_begin + threadIdx.x) * d.Hv + h] = s.g[threadIdx.x];
  const int64_t t_off = (int64_t(blockIdx.x) * d.Hv + h) * (kC * kC);
  float* t_out = p.ws.tmat ? p.ws.tmat + t_off : nullptr;
  uint16_t* tb_out = p.ws.tbeta16 ? p.ws.tbeta16 + t_off : nullptr;
  block_for(kC * kC, [&](int e) {
    const int r = e / kC, c = e % kC;
    const float t = r >= c ? expf(s.g[r] - s.g[c]) * s.x(r, c) : 0.f;
    if (t_out) t_out[e] = t;
    // The fused kernel's A operand: T diag(beta) rounded once to the input dtype (what it
    // used to form in registers from the fp32 T; the same fp32 product, the same rounding).
    if (tb_out) store_in(tb_out, e, t * s.beta[c], d.in_bf16);
  });
}

}  // namespace

cudaError_t launch_prepare(const FwdParams& p, cudaStream_t stream) {
  const size_t smem = prepare_smem_bytes();
  cudaError_t err = cudaFuncSetAttribute(prepare_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  // 68 KB per CTA: the full shared carveout keeps three CTAs (24 warps) on an SM.
  if (err == cudaSuccess)
    err = cudaFuncSetAttribute(prepare_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.d.max_chunks), p.d.Hv);
  prepare_kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

const void* prepare_kernel_symbol() { return reinterpret_cast<const void*>(prepare_kernel); }

}  // namespace gdn::staged
