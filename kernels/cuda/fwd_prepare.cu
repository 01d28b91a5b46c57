// Forward stage 1, one CTA per (chunk, v-head), 256 threads:
//   gamma = chunk-local cumsum of g                       -> gcum [Ttot, Hv]
//   N  = StrictLower(diag(beta) K K^T)        (64 x 64, reduce over K = 128; tensor cores:
//                                              16-bit k, exact products, fp32 accumulation)
//   A0 = (I + N)^-1                            gate-free, fp32 (chunk_math.cuh)
//   T  = Gam o A0 = D A0 D^-1                  -> tmat [chunk, Hv, 64, 64] (fp32, staged)
//   T diag(beta) in the input dtype            -> tbeta16 [chunk, Hv, 64, 64] (fused)
// and, for the column-warp fused loop (when its workspace pointers are set):
//   P = Gam o causal o (Q K^T) in the input dtype -> scores16 [chunk, Hv, 64, 64]
//   e = exp(gamma), f = exp(gamma_last - gamma)   -> gate_ef [chunk, Hv, 2, 64]
// (the loop's products that do not depend on the state, computed once per (chunk, head)
// instead of once per V-block and chunk step). T depends only on k, beta and g, so the
// backward reuses this kernel unchanged.
#include "block_tile.cuh"
#include "chunk_math.cuh"
#include "fused_mma.cuh"  // the mma.sync / ldmatrix wrappers (shared with the fused family)
#include "staged_kernels.cuh"
#include "launch_smem.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = 256;  // 8 warps
constexpr int kLdK16 = kK + 8;  // 16-bit k rows, padded 16 bytes: ldmatrix without conflicts

constexpr int kLdMat = kC + 4;   // fp32 64 x 64 rows padded to 16-byte multiples (float4 access)

// 53 KB: four CTAs (32 warps) share an SM. The inverse's scratch reuses k16's bytes: k is dead
// once N and P are formed; q (16-bit, only when P is wanted) borrows x's bytes until then.
struct PrepareSmem {
  uint16_t* k16;             // 64 x 128 (16-bit, stride kLdK16); later the inverse's scratch
  SmemMat n, x;              // 64 x 64 (stride kLdMat): N, then X = (I + N)^-1
  float* g;                  // 64
  float* gl2;                // 64: gamma log2(e), the exponent of exp2 for the gates
  float* beta;               // 64
  __host__ __device__ static PrepareSmem carve(SmemCarver& c) {
    PrepareSmem s;
    s.k16 = reinterpret_cast<uint16_t*>(c.take(kC * kLdK16 / 2));
    s.n = {c.take(kC * kLdMat), kLdMat};
    s.x = {c.take(kC * kLdMat), kLdMat};
    s.g = c.take(kC);
    s.gl2 = c.take(kC);
    s.beta = c.take(kC);
    return s;
  }
  __device__ float* inverse_scratch() const { return reinterpret_cast<float*>(k16); }
  __device__ uint16_t* q16() const { return reinterpret_cast<uint16_t*>(x.p); }
};
static_assert(kC * kLdMat * 4 >= kC * kLdK16 * 2, "16-bit q must fit in x's bytes");
static_assert(kC * kLdK16 / 2 >= inverse64::kScratchFloats, "the inverse's scratch must fit in k16");

// cp.async of a chunk's 64 rows of a [Ttot, H, 128] 16-bit input (row 0 at src, rows src_stride
// apart) into a padded 64 x 128 tile; rows >= len are zero-filled. Thread tid keeps column group
// tid % 16 and rows tid / 16 + 16 i, so every copy is a base plus a constant offset.
__device__ __forceinline__ void cp_async_rows(uint16_t* dst, const uint16_t* src, int64_t src_stride,
                                              int len) {
  constexpr int kGroups = kK / 8, kStep = kThreads / kGroups;
  const int cg = threadIdx.x % kGroups, r0 = threadIdx.x / kGroups;
  uint16_t* d0 = dst + r0 * kLdK16 + 8 * cg;
  const uint16_t* s0 = src + r0 * src_stride + 8 * cg;
#pragma unroll
  for (int i = 0; i < kC / kStep; ++i) {
    const bool valid = r0 + i * kStep < len;
    fused::cp_async_16(d0 + i * kStep * kLdK16, valid ? s0 + i * kStep * src_stride : src,
                       valid ? 16 : 0);
  }
}

// 2^x with ex2.approx.ftz: the exp2f instruction without its subnormal-result fix-up (results
// below 2^-126 flush to zero; gate factors that small multiply entries of O(1)). Used only where
// x <= 0 (gamma is non-increasing); elsewhere its result is selected away.
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Eight consecutive floats of shared memory (16-byte aligned) as two float4 loads.
__device__ __forceinline__ void load8(float (&v)[8], const float* p) {
  const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

// Lower-triangular products of two 64 x 128 16-bit tiles on the tensor cores, C = A B^T with
// depth 128. Warp w computes the 16 x 32 tile at rows 16 (w % 4), columns 32 (w / 4) (4
// n-tiles of 8; depth in 8 steps of 16); the two tiles wholly above the diagonal skip the
// products (their accumulators stay zero). Then out(row, col, rv, acc0, acc1) for every pair
// (col, col + 1) of the warp's tile, acc the fp32 sums, rv = row_val(row) (read once per lane
// row, after the products); out masks what lies above the diagonal.
template <class Elem, class RowVal, class Out>
__device__ void lower_abt(const uint16_t* a16, const uint16_t* b16, RowVal row_val, Out out) {
  using Ops = fused::ElemOps<Elem>;
  const fused::SmemTile16 a{const_cast<uint16_t*>(a16), kLdK16};
  const fused::SmemTile16 b{const_cast<uint16_t*>(b16), kLdK16};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int r0 = 16 * (warp % 4), c0 = 32 * (warp / 4);
  float acc[4][4] = {};
  if (c0 < r0 + 16) {
#pragma unroll
    for (int kk = 0; kk < kK / 16; ++kk) {
      uint32_t af[4];
      fused::load_a(af, a, r0, 16 * kk);
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        uint32_t bf[4];
        fused::load_b_nk(bf, b, 16 * kk, c0 + 16 * np);
        Ops::mma(acc[2 * np], af, bf[0], bf[1]);
        Ops::mma(acc[2 * np + 1], af, bf[2], bf[3]);
      }
    }
  }
  const float rv[2] = {row_val(r0 + g), row_val(r0 + g + 8)};
#pragma unroll
  for (int nj = 0; nj < 4; ++nj)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int row = r0 + g + (e >= 2 ? 8 : 0), col = c0 + 8 * nj + 2 * t;
      out(row, col, rv[e / 2], acc[nj][e], acc[nj][e + 1]);
    }
}

// N(i, j) = beta_i k_i . k_j for i > j (0 on and above the diagonal). The lane's two row betas
// are read once (the stores to n would otherwise force a reload per pair); the pair (col,
// col + 1) is one 8-byte store (col even, n.ld even, rows 16-byte aligned).
template <class Elem>
__device__ void strict_lower_kkt(const uint16_t* k16, SmemMat n, const float* beta) {
  lower_abt<Elem>(
      k16, k16, [&](int row) { return beta[row]; },
      [&](int row, int col, float b, float a0, float a1) {
        *reinterpret_cast<float2*>(&n(row, col)) =
            make_float2(row > col ? b * a0 : 0.f, row > col + 1 ? b * a1 : 0.f);
      });
}

// P(i, j) = exp(gamma_i - gamma_j) q_i . k_j for i >= j (exp only there, where it is <= 1),
// rounded once to the input dtype (the gate as exp2 of gamma log2(e), like T's). One
// warp, rows 16 rb .. 16 rb + 15, all 64 columns (16-column blocks past the diagonal block skip
// the products and store zeros).                       tile 16 x 64, depth 128
// swz = 7: the tile is stored 128-byte swizzled (ChunkWorkspace::swizzled16); 0: row-major.
template <class Elem>
__device__ void gated_scores_rows(const uint16_t* q16, const uint16_t* k16, const float* gl2,
                                  uint16_t* out, int rb, int swz) {
  using Ops = fused::ElemOps<Elem>;
  const fused::SmemTile16 q{const_cast<uint16_t*>(q16), kLdK16};
  const fused::SmemTile16 k{const_cast<uint16_t*>(k16), kLdK16};
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float acc[kC / 8][4] = {};
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    uint32_t af[4];
    fused::load_a(af, q, 16 * rb, 16 * kk);
#pragma unroll
    for (int cb = 0; cb < kC / 16; ++cb) {
      if (cb > rb) continue;  // wholly above the diagonal
      uint32_t bf[4];
      fused::load_b_nk(bf, k, 16 * kk, 16 * cb);
      Ops::mma(acc[2 * cb], af, bf[0], bf[1]);
      Ops::mma(acc[2 * cb + 1], af, bf[2], bf[3]);
    }
  }
  // Lane rows 16 rb + g (+ 8), columns 8 nj + 2t (+ 1); n-tiles wholly above the diagonal
  // block store zeros without gates. The select keeps exp2 of a positive exponent out of P.
  // Both rows are g mod 8, so swizzling moves n-tile nj's pair to 16-byte group nj ^ g (the
  // offset 2t within the group unchanged): column offset (8 nj) ^ sw8, sw8 = 8 (g & swz).
  const float gr[2] = {gl2[16 * rb + g], gl2[16 * rb + g + 8]};
  const int sw8 = 8 * (g & swz);
  uint16_t* const out_lane = out + (16 * rb + g) * kC + 2 * t;
#pragma unroll
  for (int nj = 0; nj < kC / 8; ++nj) {
    const int col = 8 * nj + 2 * t;
    const float2 gc = *reinterpret_cast<const float2*>(gl2 + col);
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int row = 16 * rb + g + (e >= 2 ? 8 : 0);
      float p0 = 0.f, p1 = 0.f;
      if (nj < 2 * rb + 2) {  // n-tile within or left of the diagonal block (warp-uniform)
        p0 = row >= col ? acc[nj][e] * ex2_ftz(gr[e / 2] - gc.x) : 0.f;
        p1 = row >= col + 1 ? acc[nj][e + 1] * ex2_ftz(gr[e / 2] - gc.y) : 0.f;
      }
      *reinterpret_cast<uint32_t*>(out_lane + (e >= 2 ? 8 * kC : 0) + ((8 * nj) ^ sw8)) =
          Ops::pack(p0, p1);
    }
  }
}

// T(r, c) = exp(gamma_r - gamma_c) X(r, c) on and below the diagonal (fp32, staged family)
// and T diag(beta) rounded once to the input dtype (the fused loops' operand). Thread tid owns
// columns c0 = 8 (tid % 8) .. c0 + 7 of rows tid / 8 and tid / 8 + 32, so the columns' gate
// exponents and betas are read once (float4) for both rows; groups wholly above the diagonal
// are zeros without reading X (its upper blocks are never written). swz = 7: tb_out's tile is
// stored 128-byte swizzled (ChunkWorkspace::swizzled16), 0: row-major; t_out is never swizzled.
template <class Elem>
__device__ void write_t(const PrepareSmem& s, float* t_out, uint16_t* tb_out, int swz) {
  using Ops = fused::ElemOps<Elem>;
  static_assert(kThreads == 256 && kC == 64, "8 column groups x 32 rows per pass, two passes");
  const int c0 = 8 * (threadIdx.x % 8);
  // Both rows are tid / 8 mod 8 (32 is a multiple of 8): group c0 / 8 of the 16-bit row moves
  // to group (c0 / 8) ^ (r % 8) when swizzled.
  const int tb_c0 = 8 * ((threadIdx.x % 8) ^ (threadIdx.x / 8 & swz));
  float gc[8], bc[8];
  load8(gc, s.gl2 + c0);
  load8(bc, s.beta + c0);
#pragma unroll
  for (int it = 0; it < 2; ++it) {
    const int r = threadIdx.x / 8 + 32 * it;
    float t[8] = {};
    if (c0 <= r) {
      float xv[8];
      load8(xv, &s.x(r, c0));
      const float gr = s.gl2[r];
      // the select keeps exp2 of a positive exponent (inf above the diagonal) out of T
#pragma unroll
      for (int i = 0; i < 8; ++i) t[i] = r >= c0 + i ? ex2_ftz(gr - gc[i]) * xv[i] : 0.f;
    }
    if (t_out) {
      *reinterpret_cast<float4*>(t_out + r * kC + c0) = make_float4(t[0], t[1], t[2], t[3]);
      *reinterpret_cast<float4*>(t_out + r * kC + c0 + 4) = make_float4(t[4], t[5], t[6], t[7]);
    }
    if (tb_out) {
      uint32_t w[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) w[i] = Ops::pack(t[2 * i] * bc[2 * i], t[2 * i + 1] * bc[2 * i + 1]);
      *reinterpret_cast<uint4*>(tb_out + r * kC + tb_c0) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

size_t prepare_smem_bytes() {
  SmemCarver c{nullptr};
  PrepareSmem::carve(c);
  return c.used;
}

// 1-D grid of max_chunks * Hv CTAs, the v-head fastest (blockIdx.x = chunk * Hv + h): the heads
// of a chunk, and so the Hv / Hk heads that share one k head (and q), run together and read k,
// q through L2. blockIdx.x is also the (chunk, head) index of the [max_chunks, Hv, ...] outputs.
// Elem: the 16-bit input dtype (d.in_bf16), one instance each, chosen at launch.
template <class Elem>
__global__ void __launch_bounds__(kThreads, 4) prepare_kernel(FwdParams p) {
  const Dims& d = p.d;
  const int pair = static_cast<int>(blockIdx.x);  // chunk * Hv + h (< 2^31, see the launch)
  const int chunk = static_cast<int>(blockIdx.x / unsigned(d.Hv)), h = pair - chunk * d.Hv;
  const ChunkInfo ci = p.ws.table[chunk];
  if (ci.len == 0) return;
  extern __shared__ __align__(16) char smem_raw[];
  SmemCarver carver{smem_raw};
  const PrepareSmem s = PrepareSmem::carve(carver);

  // k (and q, when P is wanted, into x's bytes) stream in with cp.async: one group each, so
  // q's copies overlap the forming of N. Rows >= len are zero, so they drop out.
  // k_head(d, h) = h / group, as an unsigned division (h >= 0, group >= 1: same value, about
  // half the instructions of the signed one)
  const int kh = static_cast<int>(unsigned(h) / unsigned(d.group));
  const int64_t row0 = (ci.tok_begin * d.Hk + kh) * kK, row_stride = int64_t(d.Hk) * kK;
  cp_async_rows(s.k16, static_cast<const uint16_t*>(p.k) + row0, row_stride, ci.len);
  fused::cp_async_commit();
  const bool want_scores = p.ws.scores16 != nullptr;
  if (want_scores)
    cp_async_rows(s.q16(), static_cast<const uint16_t*>(p.q) + row0, row_stride, ci.len);
  fused::cp_async_commit();
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    const int64_t gi = (ci.tok_begin + r) * d.Hv + h;
    s.g[r] = r < ci.len ? p.g[gi] : 0.f;
    s.beta[r] = r < ci.len ? load_beta(p.beta, gi, d) : 0.f;
  }
  fused::cp_async_wait(1);  // k landed (this thread's copies; the barrier makes it all)
  __syncthreads();
  chunk_cumsum_warp0(s.g, s.g);
  if (threadIdx.x < 32) {  // warp 0, after its scan
    __syncwarp();
    s.gl2[threadIdx.x] = s.g[threadIdx.x] * 1.4426950408889634f;
    s.gl2[threadIdx.x + 32] = s.g[threadIdx.x + 32] * 1.4426950408889634f;
  }

  // N(i, j) = beta_i k_i . k_j for i > j.    tile 64 x 64, depth 128
  strict_lower_kkt<Elem>(s.k16, s.n, s.beta);
  fused::cp_async_wait(0);
  __syncthreads();  // N complete; gamma scanned; q landed
  // gamma out now, so the token offsets die before the inverse and P (register pressure)
  if (threadIdx.x < ci.len) p.ws.gcum[(ci.tok_begin + threadIdx.x) * d.Hv + h] = s.g[threadIdx.x];

  // X = (I + N)^-1 in blocks of 16. Warps 0-3 invert the diagonal blocks into registers while
  // warps 4-7 form P from q (x's bytes) and k; X is written only once both are done.
  const int warp = threadIdx.x / 32;
  const int64_t t_off = int64_t(pair) * (kC * kC);
  // 16-bit tiles swizzled: the row's 16-byte group index is XOR-ed with (row % 8) & swz. A
  // uniform integer mask, not a predicate: it lives in a uniform register, off the 64.
  const int swz = p.ws.swizzled16 ? 7 : 0;
  float xc[inverse64::kBlock];
  if (warp < 4) {
    inverse64::diagonal_block_inverse(s.n, warp, xc);
  } else if (want_scores) {
    // P(i, j) = Gam o causal o (q_i . k_j)     tile 64 x 64 (16 rows per warp), depth 128
    gated_scores_rows<Elem>(s.q16(), s.k16, s.gl2, p.ws.scores16 + t_off, warp - 4, swz);
  }
  if (p.ws.gate_ef && threadIdx.x < kC) {
    float* ef = p.ws.gate_ef + int64_t(pair) * (2 * kC);
    ef[threadIdx.x] = expf(s.g[threadIdx.x]);
    ef[kC + threadIdx.x] = expf(s.g[kC - 1] - s.g[threadIdx.x]);
  }
  __syncthreads();  // q (x's bytes) no longer read
  if (warp < 4) inverse64::store_diagonal_block(s.x, warp, xc);
  __syncthreads();
  inverse64::invert_off_diagonal_blocks(s.n, s.x, s.inverse_scratch());  // ends synchronised

  float* t_out = p.ws.tmat ? p.ws.tmat + t_off : nullptr;
  uint16_t* tb_out = p.ws.tbeta16 ? p.ws.tbeta16 + t_off : nullptr;
  write_t<Elem>(s, t_out, tb_out, swz);
}

}  // namespace

cudaError_t launch_prepare(const FwdParams& p, cudaStream_t stream) {
  const size_t smem = prepare_smem_bytes();
  const auto kernel = p.d.in_bf16 ? prepare_kernel<__nv_bfloat16> : prepare_kernel<__half>;
  // 53 KB per CTA: the full shared carveout keeps four CTAs (32 warps) on an SM.
  const cudaError_t err = opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem,
                                                 Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  // One CTA per (chunk, v-head), the head fastest (see prepare_kernel); gridDim.x <= 2^31 - 1.
  const int64_t ctas = p.d.max_chunks * int64_t(p.d.Hv);
  if (ctas > int64_t(INT32_MAX)) return cudaErrorInvalidConfiguration;
  kernel<<<static_cast<unsigned>(ctas), kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

// The bf16 instance (the fp16 one has the same resources: the dtype changes only mma and cvt).
const void* prepare_kernel_symbol() {
  return reinterpret_cast<const void*>(prepare_kernel<__nv_bfloat16>);
}

}  // namespace gdn::staged
