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

constexpr int kLdMat = kC + 4;   // fp32 64 x 64 rows padded to 16-byte multiples (float4 access)

// 53 KB: four CTAs (32 warps) share an SM. The inverse's scratch reuses k16's bytes: k is dead
// once N is formed.
struct PrepareSmem {
  uint16_t* k16;             // 64 x 128 (16-bit, stride kLdK16); later the inverse's scratch
  SmemMat n, x;              // 64 x 64 (stride kLdMat): N, then X = (I + N)^-1
  float* g;                  // 64
  float* beta;               // 64
  __host__ __device__ static PrepareSmem carve(SmemCarver& c) {
    PrepareSmem s;
    s.k16 = reinterpret_cast<uint16_t*>(c.take(kC * kLdK16 / 2));
    s.n = {c.take(kC * kLdMat), kLdMat};
    s.x = {c.take(kC * kLdMat), kLdMat};
    s.g = c.take(kC);
    s.beta = c.take(kC);
    return s;
  }
  __device__ float* inverse_scratch() const { return reinterpret_cast<float*>(k16); }
};
static_assert(kC * kLdK16 / 2 >= inverse64::kScratchFloats, "the inverse's scratch must fit in k16");

// 8 consecutive 16-bit values (the dtype's bit patterns) of 8 floats, round to nearest.
__device__ __forceinline__ uint4 pack8_in(const float (&v)[8], bool bf16) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t lo = bf16 ? __bfloat16_as_ushort(__float2bfloat16(v[2 * i]))
                             : __half_as_ushort(__float2half(v[2 * i]));
    const uint32_t hi = bf16 ? __bfloat16_as_ushort(__float2bfloat16(v[2 * i + 1]))
                             : __half_as_ushort(__float2half(v[2 * i + 1]));
    w[i] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

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

__global__ void __launch_bounds__(kThreads, 4) prepare_kernel(FwdParams p) {
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

  invert_unit_lower_64(s.n, s.x, s.inverse_scratch());

  if (threadIdx.x < ci.len) p.ws.gcum[(ci.tok_begin + threadIdx.x) * d.Hv + h] = s.g[threadIdx.x];
  const int64_t t_off = (int64_t(blockIdx.x) * d.Hv + h) * (kC * kC);
  float* t_out = p.ws.tmat ? p.ws.tmat + t_off : nullptr;
  uint16_t* tb_out = p.ws.tbeta16 ? p.ws.tbeta16 + t_off : nullptr;
  // T(r, c) = exp(gamma_r - gamma_c) X(r, c) on and below the diagonal, 8 columns per step.
  for (int u = threadIdx.x; u < kC * kC / 8; u += kThreads) {
    const int r = u / 8, c0 = 8 * (u % 8);
    const float4 x0 = *reinterpret_cast<const float4*>(&s.x(r, c0));
    const float4 x1 = *reinterpret_cast<const float4*>(&s.x(r, c0 + 4));
    const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
    float t[8], tb[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int c = c0 + i;
      t[i] = r >= c ? expf(s.g[r] - s.g[c]) * xv[i] : 0.f;
      // The fused kernel's A operand: T diag(beta) rounded once to the input dtype.
      tb[i] = t[i] * s.beta[c];
    }
    if (t_out) {
      *reinterpret_cast<float4*>(t_out + r * kC + c0) = make_float4(t[0], t[1], t[2], t[3]);
      *reinterpret_cast<float4*>(t_out + r * kC + c0 + 4) = make_float4(t[4], t[5], t[6], t[7]);
    }
    if (tb_out) *reinterpret_cast<uint4*>(tb_out + r * kC + c0) = pack8_in(tb, d.in_bf16);
  }
}

}  // namespace

cudaError_t launch_prepare(const FwdParams& p, cudaStream_t stream) {
  const size_t smem = prepare_smem_bytes();
  cudaError_t err = cudaFuncSetAttribute(prepare_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  // 53 KB per CTA: the full shared carveout keeps four CTAs (32 warps) on an SM.
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
