// Forward stage 1, one CTA per (chunk, v-head), 256 threads:
//   gamma = chunk-local cumsum of g                       -> gcum [Ttot, Hv]
//   N  = StrictLower(diag(beta) K K^T)        (64 x 64, reduce over K = 128)
//   A0 = (I + N)^-1                            gate-free, fp32 (chunk_math.cuh)
//   T  = Gam o A0 = D A0 D^-1                  -> tmat [chunk, Hv, 64, 64]
// T depends only on k, beta and g, so the backward reuses this kernel unchanged.
#include "block_tile.cuh"
#include "chunk_math.cuh"
#include "staged_kernels.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = 256;

struct PrepareSmem {
  SmemMat k, n, x, scratch;  // 64 x 128, 64 x 64 (x3)
  float* g;                  // 64
  float* beta;               // 64
  __host__ __device__ static PrepareSmem carve(SmemCarver& c) {
    PrepareSmem s;
    s.k = {c.take(kC * (kK + 1)), kK + 1};
    s.n = {c.take(kC * (kC + 1)), kC + 1};
    s.x = {c.take(kC * (kC + 1)), kC + 1};
    s.scratch = {c.take(kC * (kC + 1)), kC + 1};
    s.g = c.take(kC);
    s.beta = c.take(kC);
    return s;
  }
};

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

  load_rows_128(s.k, p.k, ci, d.Hk, k_head(d, h), d.in_bf16);
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    const int64_t gi = (ci.tok_begin + r) * d.Hv + h;
    s.g[r] = r < ci.len ? p.g[gi] : 0.f;
    s.beta[r] = r < ci.len ? load_beta(p.beta, gi, d) : 0.f;
  }
  __syncthreads();
  chunk_cumsum_warp0(s.g, s.g);

  // N(i, j) = beta_i k_i . k_j for i > j.    tile 64 x 64, depth 128
  BlockTile<kC, kC, kThreads> kk;
  kk.zero();
  kk.mma(kK, [&](int i, int c) { return s.k(i, c); }, [&](int c, int j) { return s.k(j, c); });
  kk.each([&](int i, int j, float& a) { s.n(i, j) = i > j ? s.beta[i] * a : 0.f; });
  __syncthreads();

  invert_unit_lower_64(s.n, s.x, s.scratch);

  if (threadIdx.x < ci.len) p.ws.gcum[(ci.tok_begin + threadIdx.x) * d.Hv + h] = s.g[threadIdx.x];
  float* t_out = p.ws.tmat + (int64_t(blockIdx.x) * d.Hv + h) * (kC * kC);
  block_for(kC * kC, [&](int e) {
    const int r = e / kC, c = e % kC;
    t_out[e] = r >= c ? expf(s.g[r] - s.g[c]) * s.x(r, c) : 0.f;
  });
}

}  // namespace

cudaError_t launch_prepare(const FwdParams& p, cudaStream_t stream) {
  const size_t smem = prepare_smem_bytes();
  cudaError_t err = cudaFuncSetAttribute(prepare_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.d.max_chunks), p.d.Hv);
  prepare_kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

const void* prepare_kernel_symbol() { return reinterpret_cast<const void*>(prepare_kernel); }

}  // namespace gdn::staged
