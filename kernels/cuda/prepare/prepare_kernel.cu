// Forward stage 1, one CTA per (chunk, run of `heads` v-heads of one GQA group), 256 threads.
// The v-heads of a group share their k head (and q head), so the raw products
//   R_kk = K K^T (strictly lower)  and  R_qk = Q K^T (lower, only when P is wanted)
// (64 x 64, reduce over K = 128; tensor cores: 16-bit k, q, exact products, fp32 accumulation)
// are formed once per CTA and kept in shared memory; then, per v-head of the run:
//   gamma = chunk-local cumsum of g                       -> gcum [Ttot, Hv] (when set)
//   N  = StrictLower(diag(beta) R_kk)
//   A0 = (I + N)^-1                            gate-free, fp32 (common/chunk_math.cuh)
//   T  = Gam o A0 = D A0 D^-1                  -> tmat [chunk, Hv, 64, 64] (fp32, staged)
//   T in the input dtype                       -> t16 [chunk, Hv, 64, 64] (fused; the loops
//                                                 apply beta to W' in fp32 before rounding)
// and, for the column-warp fused loop (when its workspace pointers are set):
//   P = Gam o causal o R_qk in the input dtype -> scores16 [chunk, Hv, 64, 64]
//   e = exp(gamma), f = exp(gamma_last - gamma), beta -> gate_ef [chunk, Hv, 3, 64]
// (the loop's products that do not depend on the state, computed once per (chunk, head)
// instead of once per V-block and chunk step). Every output is bit-identical to computing the
// products per v-head: the same fp32 sums, scaled by the same factors. T depends only on k,
// beta and g, so the backward reuses this kernel unchanged.
#include <algorithm>

#include "common/block_tile.cuh"
#include "common/chunk_math.cuh"
#include "arch/mma.cuh"  // the mma.sync / ldmatrix wrappers (shared with the fused family)
#include "staged/kernels.cuh"
#include "arch/grid_dependency.cuh"
#include "arch/launch_smem.cuh"
#include "common/lower_packed_tile.cuh"
#include "prepare/scheduler.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = 256;  // 8 warps
constexpr int kLdK16 = kK + 8;  // 16-bit k rows, padded 16 bytes: ldmatrix without conflicts

constexpr int kLdMat = kC + 4;   // fp32 64 x 64 rows padded to 16-byte multiples (float4 access)
constexpr int kMaxHeads = 8;     // v-heads per CTA at most (they share one k head)
static_assert(kMaxHeads <= kThreads / 32, "warp j scans head j's gamma");
constexpr float kLog2e = 1.4426950408889634f;  // gamma log2(e): the exponent of exp2 for the gates

// gamma log2(e), rounded as a product of its own (__fmul_rn: never contracted into the
// subtraction of the gate exponent, so the same value as a stored exponent would be).
__device__ __forceinline__ float to_log2(float gamma) { return __fmul_rn(gamma, kLog2e); }

// 55 KB: four CTAs (32 warps) share an SM.
//   raw: R_kk strictly below the diagonal at (r, c) (shared by the run's heads)
//   n:   k (16-bit, stride kLdK16) while the products are formed; then R_qk on and below the
//        diagonal at (r, c) (shared by the run's heads) and the inverse's scratch M (32 x 32,
//        its upper-right quadrant, strictly above the diagonal)
//   x:   X per head; before that q (16-bit)
//   gam, bet: gamma (scanned in place from g) and beta of each head of the run, 64 each
// The inverse's other scratch (the four S) lies in x's upper-right quadrant, which X and T
// never touch (both lower triangular).
struct PrepareSmem {
  SmemMat raw, n, x;         // 64 x 64 (stride kLdMat)
  float* gam;                // kMaxHeads x 64
  float* bet;                // kMaxHeads x 64
  __host__ __device__ static PrepareSmem carve(SmemCarver& c) {
    PrepareSmem s;
    s.raw = {c.take(kC * kLdMat), kLdMat};
    s.n = {c.take(kC * kLdMat), kLdMat};
    s.x = {c.take(kC * kLdMat), kLdMat};
    s.gam = c.take(kMaxHeads * kC);
    s.bet = c.take(kMaxHeads * kC);
    return s;
  }
  __device__ uint16_t* k16() const { return reinterpret_cast<uint16_t*>(n.p); }
  __device__ uint16_t* q16() const { return reinterpret_cast<uint16_t*>(x.p); }
};
static_assert(kC * kLdMat * 4 >= kC * kLdK16 * 2, "16-bit k and q must fit in n's and x's bytes");
static_assert(kLdMat % 4 == 0, "float4 rows");

// cp.async of a chunk's 64 rows of a [Ttot, H, 128] 16-bit input (row 0 at src, rows row_stride
// elements apart) into a padded 64 x 128 tile; rows >= len (len >= 1) are zero-filled (a zero-byte
// copy from row 0). Thread tid keeps column group tid % 16 and rows tid / 16 + 16 i. Row offsets
// are 32-bit (63 row_stride < 2^31 for any Hk below 2^18): one wide multiply-add per copy, not the
// 64-bit address arithmetic of a pointer per row.
__device__ __forceinline__ void cp_async_rows(uint16_t* dst, const uint16_t* src, int row_stride,
                                              int len) {
  constexpr int kGroups = kK / 8, kStep = kThreads / kGroups;
  const int cg = threadIdx.x % kGroups, r0 = threadIdx.x / kGroups;
  uint16_t* d0 = dst + r0 * kLdK16 + 8 * cg;
  const uint16_t* s0 = src + 8 * cg;
#pragma unroll 2
  for (int i = 0; i < kC / kStep; ++i) {
    const int r = r0 + i * kStep;
    const bool valid = r < len;
    fused::cp_async_16(d0 + i * kStep * kLdK16, s0 + (valid ? r * row_stride : 0), valid ? 16 : 0);
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
// products and the stores. Then out(row, col, acc0, acc1) for every pair (col, col + 1) of the
// computed tiles, acc the fp32 sums; out chooses what to keep. kSyncBeforeStore:
// every thread of the CTA meets a barrier between the products and the stores (the stores may
// then overwrite the operands' bytes). The two warps whose tiles lie wholly above the diagonal
// (warps 4 and 5) run idle(sync) instead, which must call sync() exactly once (the barrier the
// product warps meet before their stores; a no-op without kSyncBeforeStore).
template <class Elem, bool kSyncBeforeStore, class Out, class Idle>
__device__ void lower_abt(const uint16_t* a16, const uint16_t* b16, Out out, Idle idle) {
  using Ops = fused::ElemOps<Elem>;
  const fused::SmemTile16 a{const_cast<uint16_t*>(a16), kLdK16};
  const fused::SmemTile16 b{const_cast<uint16_t*>(b16), kLdK16};
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int r0 = 16 * (warp % 4), c0 = 32 * (warp / 4);
  const bool below = c0 < r0 + 16;  // warp-uniform
  if (!below) {
    idle([] {
      if constexpr (kSyncBeforeStore) __syncthreads();
    });
    return;
  }
  float acc[4][4] = {};
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
  if constexpr (kSyncBeforeStore) __syncthreads();
#pragma unroll
  for (int nj = 0; nj < 4; ++nj)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int row = r0 + g + (e >= 2 ? 8 : 0), col = c0 + 8 * nj + 2 * t;
      out(row, col, acc[nj][e], acc[nj][e + 1]);
    }
}

// R_kk(i, j) = k_i . k_j for i > j, at raw(i, j) (nothing on or above the diagonal). The pair
// (col, col + 1) is one 8-byte store where both lie below the diagonal.
template <class Elem>
__device__ void raw_kkt(const uint16_t* k16, SmemMat raw) {
  lower_abt<Elem, false>(
      k16, k16,
      [&](int row, int col, float a0, float a1) {
        if (row > col + 1)
          *reinterpret_cast<float2*>(&raw(row, col)) = make_float2(a0, a1);
        else if (row > col)
          raw(row, col) = a0;
      },
      [](auto sync) { sync(); });
}

// R_qk(i, j) = q_i . k_j at rqk(i, j), row-major like X, so that write_t reads both with the
// same float4 loads. rqk is n: the products read k from n's bytes, so every thread passes a
// barrier before the stores. Every computed tile is stored whole, its few entries above the
// diagonal too (finite products, which write_t multiplies by a zero gate): so every 8-column
// group that write_t reads holds finite values. The tiles wholly above the diagonal are not
// computed, and n's upper-right quadrant (rows 0-31, columns 32-63: the inverse's scratch M)
// lies in them.
// Meanwhile warps 4 and 5, which have no tile of R_qk, do the first head's (gam0, bet0) part
// of the inverse that needs no other warp: its four diagonal blocks of X, into registers
// during the products (from R_kk and beta, complete at the caller's barrier before), stored
// into x once every warp has passed the barrier after which q (x's bytes) is no longer read;
// and gamma of that head to log2 units in place (gam0; its natural-unit readers, gcum and
// gate_ef, precede this call in every thread, so the barrier orders them too). The caller's
// next barrier publishes both.
template <class Elem>
__device__ void raw_qkt_beside_first_diagonal(const uint16_t* q16, const uint16_t* k16,
                                              SmemMat rqk, SmemMat raw, SmemMat x, float* gam0,
                                              const float* bet0) {
  lower_abt<Elem, true>(
      q16, k16,
      [&](int row, int col, float a0, float a1) {
        *reinterpret_cast<float2*>(&rqk(row, col)) = make_float2(a0, a1);
      },
      [&](auto sync) {
        const int pair = static_cast<int>(threadIdx.x / 32) - 4;  // 0, 1: blocks 2 pair, + 1
        float xc[inverse64::kBlock];
        inverse64::diagonal_block_inverse(raw, bet0, pair, xc);
        sync();
        inverse64::store_diagonal_block(x, pair, xc);
        const int r = static_cast<int>(threadIdx.x) - 128;  // 0 .. 63
        gam0[r] = to_log2(gam0[r]);
      });
}

// The (row, 8-column group) tasks on and below the diagonal of a 64 x 64 tile: group gi of row r
// with gi <= r / 8, 288 of the 512. Row blocks a and 7 - a (8 rows each) pair up: a row of
// block a has groups 0 .. a, its partner row (same row within the block) of block 7 - a has
// groups 0 .. 7 - a, 9 tasks per row pair. Task `slot` (0 .. 8) of row pair `pair` (0 .. 31:
// block pair pair / 8, row within the block pair % 8).
__device__ __forceinline__ void lower_task(int pair, int slot, int& row, int& c0) {
  const int bp = pair / 8, rho = pair % 8;
  const bool low = slot <= bp;
  row = (low ? 8 * bp : 8 * (7 - bp)) + rho;
  c0 = 8 * (low ? slot : slot - bp - 1);
}

// Element offset of the 16-bit tiles' 8-column group (r, c0 .. c0 + 7): lower-packed
// (fused::LowerPackedTile, for groups it stores) or row-major.
__device__ __forceinline__ int tile16_offset(int r, int c0, bool packed) {
  return packed ? fused::LowerPackedTile::offset(r, c0) : r * kC + c0;
}

// One task of write_t: row r, columns c0 .. c0 + 7 (c0 <= r), one exponential per element for
// T and P. gam2: gamma log2(e) (to_log2), so the gate is exp2(gam2_r - gam2_c); it is 0 (not
// evaluated) above the diagonal, where X is zero and R_qk finite (raw_qkt), so those products
// are zeros.
template <class Elem>
__device__ __forceinline__ void write_t_task(SmemMat x, SmemMat rqk, const float* gam2, int r,
                                             int c0, float* t_out, uint16_t* tb_out,
                                             uint16_t* tr_out, uint16_t* p_out, bool packed) {
  using Ops = fused::ElemOps<Elem>;
  float gc[8], xv[8], qv[8] = {};
  load8(gc, gam2 + c0);
  load8(xv, &x(r, c0));
  if (p_out) load8(qv, &rqk(r, c0));
  const float gr = gam2[r];
  const int lim = r - c0;  // elements i <= lim lie on or below the diagonal
  float t[8], pv[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float gate = i <= lim ? ex2_ftz(gr - gc[i]) : 0.f;
    t[i] = gate * xv[i];
    pv[i] = gate * qv[i];
  }
  const int tb_off = tile16_offset(r, c0, packed);
  if (t_out) {
    *reinterpret_cast<float4*>(t_out + r * kC + c0) = make_float4(t[0], t[1], t[2], t[3]);
    *reinterpret_cast<float4*>(t_out + r * kC + c0 + 4) = make_float4(t[4], t[5], t[6], t[7]);
  }
  if (tb_out || tr_out) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = Ops::pack(t[2 * i], t[2 * i + 1]);
    if (tb_out) *reinterpret_cast<uint4*>(tb_out + tb_off) = make_uint4(w[0], w[1], w[2], w[3]);
    if (tr_out) *reinterpret_cast<uint4*>(tr_out + r * kC + c0) = make_uint4(w[0], w[1], w[2], w[3]);
  }
  if (p_out) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = Ops::pack(pv[2 * i], pv[2 * i + 1]);
    *reinterpret_cast<uint4*>(p_out + tb_off) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// T(r, c) = exp(gamma_r - gamma_c) X(r, c) on and below the diagonal (fp32, staged family),
// T rounded once to the input dtype (the fused loops' operand: they scale W' by beta in fp32
// before rounding it, so beta is never rounded alone, which for a one-token chunk made the
// whole new-token term of o carry its rounding error), and, with p_out,
// P(r, c) = exp(gamma_r - gamma_c) R_qk(r, c) on and below the diagonal rounded once to the
// input dtype (the column-warp loop's operand); zeros above. Only the 288 (row, group) tasks
// on and below the diagonal are computed (lower_task: slots 0 .. 7 by every thread, slot 8 by
// warp 0), so no warp issues a whole pass of tasks that are zeros; the 224 groups above the
// diagonal are stored as zeros, or with `packed` (ChunkWorkspace::lower_packed16: tb_out's and
// p_out's tiles lower-packed, else row-major; t_out is always row-major) the 32 of them the
// packed tiles keep (the upper 8 x 8 of each diagonal 16 x 16 block).
template <class Elem>
__device__ void write_t(SmemMat x, SmemMat rqk, const float* gam2, float* t_out,
                        uint16_t* tb_out, uint16_t* tr_out, uint16_t* p_out, bool packed) {
  static_assert(kThreads == 256 && kC == 64, "32 row pairs x 8 slots, then slot 8 by warp 0");
  {
    const int gi = threadIdx.x % 8;  // zeros above the diagonal: group gi of rows r < 8 gi
#pragma unroll
    for (int it = 0; it < 2; ++it) {
      const int r = threadIdx.x / 8 + 32 * it;
      if (gi <= r / 8) continue;
      if (t_out) {
        *reinterpret_cast<float4*>(t_out + r * kC + 8 * gi) = make_float4(0.f, 0.f, 0.f, 0.f);
        *reinterpret_cast<float4*>(t_out + r * kC + 8 * gi + 4) = make_float4(0.f, 0.f, 0.f, 0.f);
      }
      if (tr_out) *reinterpret_cast<uint4*>(tr_out + r * kC + 8 * gi) = make_uint4(0, 0, 0, 0);
      if (packed && !fused::LowerPackedTile::stored(r, 8 * gi)) continue;
      const int tb_off = tile16_offset(r, 8 * gi, packed);
      if (tb_out) *reinterpret_cast<uint4*>(tb_out + tb_off) = make_uint4(0, 0, 0, 0);
      if (p_out) *reinterpret_cast<uint4*>(p_out + tb_off) = make_uint4(0, 0, 0, 0);
    }
  }
  int r, c0;
  lower_task(threadIdx.x / 8, threadIdx.x % 8, r, c0);
  write_t_task<Elem>(x, rqk, gam2, r, c0, t_out, tb_out, tr_out, p_out, packed);
  if (threadIdx.x < 32) {
    lower_task(threadIdx.x, 8, r, c0);
    write_t_task<Elem>(x, rqk, gam2, r, c0, t_out, tb_out, tr_out, p_out, packed);
  }
}

size_t prepare_smem_bytes() {
  SmemCarver c{nullptr};
  PrepareSmem::carve(c);
  return c.used;
}

// e / heads for the (row, head) elements e < 64 heads of a run, heads in 1 .. kMaxHeads, by a
// multiply and a shift instead of an integer division: floor(e ceil(2^16 / heads) / 2^16)
// errs by under e / 2^16 < 1 / 128 < 1 / heads, too little to cross an integer.
// The multiplier is formed on the host (a kernel parameter: no division on the device).
struct RunIndex {
  unsigned mul;
  static unsigned multiplier(int heads) { return (65536u + unsigned(heads) - 1) / unsigned(heads); }
  __device__ int row(int e) const { return static_cast<int>((unsigned(e) * mul) >> 16); }
};
static_assert(kC * kMaxHeads <= 512, "RunIndex is exact for e < 512 only");

// One work item: chunk `chunk` and the v-heads h0 .. h0 + heads - 1, all of one k head
// (h0 / group); heads (1 .. kMaxHeads) divides d.group. The (chunk, head) index of the
// [max_chunks, Hv, ...] outputs is chunk Hv + h0 + j for the run's head j. Returns with the
// CTA synchronised (shared memory free for the next item) and, when p.ws.ready is set, the
// chunk's count of prepared heads raised by `heads` after every output of the item is visible.
template <class Elem>
__device__ void prepare_item(const FwdParams& p, int heads, RunIndex run, int chunk, int h0) {
  // (carved per item: the pointers are cheap to form, and not keeping them across items keeps
  // the kernel within 64 registers)
  extern __shared__ __align__(16) char smem_raw[];
  SmemCarver carver{smem_raw};
  const PrepareSmem s = PrepareSmem::carve(carver);
  const Dims& d = p.d;
  const ChunkInfo ci = p.ws.table[chunk];
  if (ci.len == 0) return;  // uniform over the CTA; no consumer waits on an empty chunk
  const int warp = threadIdx.x / 32;
  // k (into n's bytes) and q (when P is wanted, into x's bytes) stream in with cp.async: one
  // group each, so q's copies overlap the forming of R_kk. Rows >= len are zero, so they drop
  // out. k_head(d, h0) = h0 / group, as an unsigned division.
  const bool want_scores = p.ws.scores16 != nullptr;
  {
    const int kh = static_cast<int>(unsigned(h0) / unsigned(d.group));
    const int64_t row0 = (ci.tok_begin * d.Hk + kh) * kK;
    const int row_stride = d.Hk * kK;
    cp_async_rows(s.k16(), static_cast<const uint16_t*>(p.k) + row0, row_stride, ci.len);
    fused::cp_async_commit();
    if (want_scores)
      cp_async_rows(s.q16(), static_cast<const uint16_t*>(p.q) + row0, row_stride, ci.len);
    fused::cp_async_commit();
  }
  // g and beta of the run's heads: element e is row e / heads of head e % heads, so a warp
  // reads whole runs of adjacent heads of a token (coalesced). Rows >= len are 0 (gamma then
  // repeats its last value, beta drops the row).
  {
    const float* g0 = p.g + (ci.tok_begin * d.Hv + h0);
    for (int e = threadIdx.x; e < kC * heads; e += kThreads) {
      const int r = run.row(e), j = e - r * heads;
      const int off = r * d.Hv + j;
      s.gam[kC * j + r] = r < ci.len ? g0[off] : 0.f;
      s.bet[kC * j + r] = r < ci.len ? load_beta(p.beta, ci.tok_begin * d.Hv + h0 + off, d) : 0.f;
    }
  }
  fused::cp_async_wait(1);  // k landed (this thread's copies; the barrier makes it all)
  __syncthreads();
  if (warp < heads)  // gamma of head `warp`
    chunk_cumsum_warp(s.gam + kC * warp, s.gam + kC * warp, static_cast<int>(threadIdx.x % 32));

  // R_kk(i, j) = k_i . k_j for i > j.    tile 64 x 64, depth 128
  raw_kkt<Elem>(s.k16(), s.raw);
  fused::cp_async_wait(0);
  __syncthreads();  // gamma scanned; q landed

  // gamma (when a consumer reads it: not the column-warp loop, which takes e and f) and the
  // gate vectors of every head of the run, the run's heads adjacent in memory
  if (p.ws.gcum)
    for (int e = threadIdx.x; e < kC * heads; e += kThreads) {
      const int r = run.row(e), j = e - r * heads;
      if (r < ci.len) p.ws.gcum[(ci.tok_begin + r) * d.Hv + h0 + j] = s.gam[kC * j + r];
    }
  if (p.ws.gate_ef) {
    float* ef = p.ws.gate_ef + (int64_t(chunk) * d.Hv + h0) * (3 * kC);  // [heads][3][64]
#pragma unroll 1  // (unrolled, its hoisted addresses would not fit the 64 registers)
    for (int e = threadIdx.x; e < 3 * kC * heads; e += kThreads) {
      const int j = e / (3 * kC), row = e / kC - 3 * j, r = e % kC;
      const float* gm = s.gam + kC * j;
      ef[e] = row == 0 ? expf(gm[r]) : row == 1 ? expf(gm[kC - 1] - gm[r]) : s.bet[kC * j + r];
    }
  }

  // R_qk(i, j) = q_i . k_j for i >= j.    tile 64 x 64, depth 128 (into n, over k's bytes);
  // beside it, the first head's diagonal blocks of X and its gamma in log2 units
  if (want_scores)
    raw_qkt_beside_first_diagonal<Elem>(s.q16(), s.k16(), s.n, s.raw, s.x, s.gam, s.bet);
  __syncthreads();  // R_kk and R_qk complete; q (x's bytes) no longer read

  const bool packed = p.ws.lower_packed16;
  for (int j = 0; j < heads; ++j) {
    const float* gam2 = s.gam + kC * j;  // gamma log2(e) once the diagonal blocks are done
    const float* bet = s.bet + kC * j;
    const int64_t t_off = (int64_t(chunk) * d.Hv + h0 + j) * (kC * kC);
    // X = (I + N)^-1, N = StrictLower(diag(beta) R_kk), in blocks of 16, from R_kk (raw's
    // lower half) with beta applied to the products' rows: N is never formed. The first
    // head's diagonal blocks (and gamma in log2 units) were done beside R_qk when P is wanted.
    if (j > 0 || !want_scores) {
      // (the previous head's inverse has ended synchronised; its write_t reads x, gam, bet)
      __syncthreads();  // the previous head's T written: x free
      // Warps 0-1 invert the diagonal blocks (two each).
      if (warp < 2) {
        float xc[inverse64::kBlock];
        inverse64::diagonal_block_inverse(s.raw, bet, warp, xc);
        inverse64::store_diagonal_block(s.x, warp, xc);
      } else if (warp < 4) {  // meanwhile gamma to log2 units, in place (write_t's only use)
        float* gm = s.gam + kC * j;
        gm[threadIdx.x - 64] = to_log2(gm[threadIdx.x - 64]);
      }
      __syncthreads();
    }
    // scratch: M in n's upper-right quadrant, warp w's S at x(0, 32 + 8 w) (x's upper right)
    inverse64::invert_off_diagonal_blocks(s.raw, bet, s.x, &s.n(0, 32), s.n.ld, &s.x(0, 32), 8,
                                          s.x.ld);  // ends synchronised
    float* t_out = p.ws.tmat ? p.ws.tmat + t_off : nullptr;
    uint16_t* tb_out = p.ws.t16 ? p.ws.t16 + t_off : nullptr;
    uint16_t* tr_out = p.ws.t16_rows ? p.ws.t16_rows + t_off : nullptr;
    // P(i, j) = Gam o causal o R_qk     tile 64 x 64, beside T (one exponential for both)
    uint16_t* p_out = want_scores ? p.ws.scores16 + t_off : nullptr;
    write_t<Elem>(s.x, s.n, gam2, t_out, tb_out, tr_out, p_out, packed);
  }
  __syncthreads();  // the item's outputs all written; shared memory free for the next item
  if (p.ws.ready && threadIdx.x == 0) {
    __threadfence();  // cumulative: every thread's stores above (ordered by the barrier) first
    atomicAdd(p.ws.ready + chunk, heads);
  }
}

// The longest unit's chunk count (ChunkWorkspace::order_bounds), a block-wide maximum.
__device__ int64_t longest_unit(const ChunkWorkspace& ws) {
  __shared__ unsigned long long longest;
  if (threadIdx.x == 0) longest = 0;
  __syncthreads();
  unsigned long long m = 0;
  for (int64_t u = threadIdx.x; u < ws.order_units; u += kThreads) {
    const int64_t* b = ws.order_bounds + u * ws.order_stride;
    const int64_t len = b[1] - b[0];
    if (len > 0 && static_cast<unsigned long long>(len) > m) m = static_cast<unsigned long long>(len);
  }
  atomicMax(&longest, m);
  __syncthreads();
  return static_cast<int64_t>(longest);
}

// Whether this CTA works (true) or leaves its SM to the loop (false; exclusive overlap,
// ChunkWorkspace::claims). The first CTA to land on an SM decides for every CTA there: the
// k-th SM to be decided is reserved when k is odd and fewer than reserved_sms SMs are, so the
// first SM always works (the loop, which waits on this grid's items, never waits on an empty
// grid, however few SMs the grid finds) and reserved SMs alternate with working ones until
// reserved_sms are reserved. SM ids past the claims (kMaxSmIds) always work.
__device__ bool claim_sm_for_work(const ChunkWorkspace& ws) {
  __shared__ int role;
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
    int r = kClaimWorking;
    if (smid < unsigned(kMaxSmIds)) {
      int* const state = ws.claims + smid;
      r = atomicCAS(state, 0, kClaimDeciding);
      if (r == 0) {
        const int k = atomicAdd(ws.claims + kClaimDecided, 1);
        r = (k % 2 == 1 && k / 2 < ws.reserved_sms) ? kClaimReserved : kClaimWorking;
        atomicExch(state, r);
      }
      while (r == kClaimDeciding) {  // the SM's decider (resident beside this CTA) is deciding
        __nanosleep(32);
        r = atomicAdd(state, 0);
      }
    }
    role = r;
  }
  __syncthreads();
  return role != kClaimReserved;
}

// The next item of the grid's shared queue (exclusive overlap): thread 0 takes it, the block
// reads it between two barriers (an item may return without meeting one: an empty chunk).
__device__ unsigned next_queued_item(const ChunkWorkspace& ws) {
  __shared__ unsigned next;
  if (threadIdx.x == 0) next = atomicAdd(reinterpret_cast<unsigned*>(ws.claims + kClaimNextItem), 1u);
  __syncthreads();
  const unsigned item = next;
  __syncthreads();
  return item;
}

// Items over a 1-D grid, CTA b taking items b, b + gridDim.x, ...; an item is a chunk and a
// run of `heads` v-heads (runs = Hv / heads runs per chunk, adjacent items). Ordinarily the
// grid has one CTA per item, chunk by chunk. With p.ws.ready set the grid is persistent (at
// most two CTAs per SM, leaving each SM room for a consumer CTA), lets its programmatic
// dependent launch at once (the consumer polls the per-chunk counts instead of waiting for
// this grid to complete), and takes the chunks in the consumer's order (order_bounds: offset
// within the unit, then unit) unless the units are so ragged that more than half the
// (offset, unit) slots would be empty; then chunk by chunk. With p.ws.claims set as well
// (exclusive overlap) the grid has four CTAs per SM, those on the SMs reserved for the loop
// exit at once (claim_sm_for_work), and the others take the items in the same order from a
// shared queue (a fixed stride would lose the items of the CTAs that left).
// Elem: the 16-bit input dtype (d.in_bf16), one instance each, chosen at launch.
// With p.ws.beside_loop (the tail grid of a prepare split around CP pass 1) the CTAs start at
// once, take the items of chunks [chunk_begin, chunk_end) from the shared queue and wait for
// the prior grids (pass 1) only before they exit (ChunkWorkspace::beside_loop).
template <class Elem>
__global__ void __launch_bounds__(kThreads, 4) prepare_kernel(FwdParams p, int heads, unsigned runs,
                                                                  RunIndex run) {
  const ChunkWorkspace& ws = p.ws;
  if (!ws.beside_loop) wait_for_prior_grids();
  bool ordered = false;
  int64_t unit_chunks = 0;
  if (ws.ready) {
    allow_dependents_to_launch();
    if (ws.claims && !claim_sm_for_work(ws)) return;  // the SM is left to the loop
    if (ws.order_bounds) {
      unit_chunks = ws.order_unit_chunks > 0 ? ws.order_unit_chunks : longest_unit(ws);
      ordered = order_by_unit(ws.order_units, unit_chunks, ws.chunk_first[p.d.num_seqs]);
    }
  }
  // (launch_prepare resolved chunk_end < 0 to the table's end)
  const int64_t slots = ordered ? ws.order_units * unit_chunks : ws.chunk_end - ws.chunk_begin;
  const int64_t items = slots * runs;
  const bool queued = (ws.ready || ws.beside_loop) && ws.claims;
  for (int64_t item = queued ? next_queued_item(ws) : blockIdx.x; item < items;
       item = queued ? next_queued_item(ws) : item + gridDim.x) {
    const int64_t slot = item / runs;
    const int h0 = static_cast<int>(item - slot * runs) * heads;
    int64_t chunk = ws.chunk_begin + slot;
    if (ordered && !chunk_of_slot(slot, ws.order_bounds, ws.order_stride, ws.order_units, chunk))
      continue;  // past its unit's end (uniform over the CTA)
    prepare_item<Elem>(p, heads, run, static_cast<int>(chunk), h0);
  }
  // Beside pass 1: this grid completes only after pass 1 has (what follows in the stream waits
  // for this grid alone).
  if (ws.beside_loop) wait_for_prior_grids();
}

// CTAs per SM of the persistent grid (p.ws.ready set): two of 55 KB and at most 64 registers x
// 256 threads leave 118 KB and half the register file, one 64-column column-warp loop CTA's
// worth, on every SM.
constexpr int kPersistentCtasPerSm = 2;

// v-heads per CTA: a divisor of the group (so the run shares one k head), at most kMaxHeads.
// More heads per CTA share the loads and products of k and q over more heads but leave fewer
// CTAs to fill the GPU. Model: an item costs about kSharedCost + heads units (the shared
// loads and products, then each head's inverse and outputs), and the grid takes
// ceil(items / slots) rounds, slots the CTAs resident at once; the cheapest count wins, ties
// to more heads.
int heads_per_cta(const Dims& d, int64_t slots) {
  constexpr int64_t kSharedCost = 1;
  const int64_t pairs = d.max_chunks * int64_t(d.Hv);
  if (d.group <= 0) return 1;
  int best = 1;
  int64_t best_cost = -1;
  for (int heads = 1; heads <= kMaxHeads; ++heads) {
    if (d.group % heads != 0) continue;
    const int64_t items = pairs / heads;
    const int64_t cost = ((items + slots - 1) / slots) * (kSharedCost + heads);
    if (best_cost < 0 || cost <= best_cost) best = heads, best_cost = cost;
  }
  return best;
}

}  // namespace

// The device's SM count (132 if the query fails: a failed query must not leak into the launch
// check).
int device_sm_count() {
  int sms = 0, dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 132;
  }
  return sms > 0 ? sms : 132;
}

cudaError_t launch_prepare(const FwdParams& params, int sms, cudaStream_t stream) {
  FwdParams p = params;
  if (p.ws.chunk_end < 0) p.ws.chunk_end = p.d.max_chunks;
  if (p.ws.chunk_begin < 0 || p.ws.chunk_begin > p.ws.chunk_end || p.ws.chunk_end > p.d.max_chunks ||
      (p.ws.beside_loop && (p.ws.ready || !p.ws.claims)))
    return cudaErrorInvalidValue;
  if (p.ws.chunk_begin == p.ws.chunk_end) return cudaSuccess;  // nothing to prepare
  const size_t smem = prepare_smem_bytes();
  const auto kernel = p.d.in_bf16 ? prepare_kernel<__nv_bfloat16> : prepare_kernel<__half>;
  // 55 KB per CTA: the full shared carveout keeps four CTAs (32 warps) on an SM.
  const cudaError_t err = opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem,
                                                 Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  // (chunk, head) indices stay below 2^31 (int in the kernel), and so does gridDim.x.
  if (p.d.max_chunks * int64_t(p.d.Hv) > int64_t(INT32_MAX)) return cudaErrorInvalidConfiguration;
  const int64_t pairs = (p.ws.chunk_end - p.ws.chunk_begin) * int64_t(p.d.Hv);
  const int64_t sm_count = sms > 0 ? sms : 132;
  if (p.ws.beside_loop) {
    // Beside pass 1: two CTAs fit beside a 64-column loop CTA, four on an SM it left; the grid
    // holds four per SM (or one per item), and those that land only as pass 1 drains find the
    // queue short or empty.
    const int heads = heads_per_cta(p.d, kPersistentCtasPerSm * sm_count);
    const int64_t items = pairs / heads;
    const int64_t ctas = std::min<int64_t>(items, 4 * sm_count);
    return launch_after_prior(kernel, static_cast<unsigned>(ctas), kThreads, smem, stream, p,
                              heads, static_cast<unsigned>(p.d.Hv / heads),
                              RunIndex{RunIndex::multiplier(heads)});
  }
  // Resident CTAs that work: four per SM, two per SM beside a loop CTA (shared overlap), four
  // per SM on the SMs not reserved for the loop (exclusive).
  const bool exclusive = p.ws.ready && p.ws.claims;
  const int64_t working_sms = exclusive ? std::max<int64_t>(1, sm_count - p.ws.reserved_sms) : sm_count;
  const int64_t slots = (p.ws.ready && !exclusive ? kPersistentCtasPerSm : 4) * working_sms;
  const int heads = heads_per_cta(p.d, slots);
  const int64_t items = pairs / heads;  // chunk by chunk; at most twice as many when ordered
  // Exclusive: four CTAs on every SM (those on reserved SMs leave; the queue shares the items).
  const int64_t ctas = exclusive ? 4 * sm_count
                       : p.ws.ready && 2 * items > slots ? slots
                       : (p.ws.ready ? 2 * items : items);
  return launch_after_prior(kernel, static_cast<unsigned>(ctas), kThreads, smem, stream, p,
                            heads, static_cast<unsigned>(p.d.Hv / heads),
                            RunIndex{RunIndex::multiplier(heads)});
}

// The bf16 instance (the fp16 one has the same resources: the dtype changes only mma and cvt).
const void* prepare_kernel_symbol() {
  return reinterpret_cast<const void*>(prepare_kernel<__nv_bfloat16>);
}

}  // namespace gdn::staged
