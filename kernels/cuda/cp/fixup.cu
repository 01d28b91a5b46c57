// Exact intra-card context parallelism of the fused family (docs/design.md):
// the device-built segment table, and the sequential fix-up h_{i+1} = M_i h_i + N_i that turns
// the per-segment transfers [M | N] of pass 1 into the start state of every segment.
#include "common/chunk_math.cuh"  // inverse64::mma_3xtf32
#include "forward/kernels.cuh"
#include "forward/tensor_maps.cuh"
#include "arch/tma.cuh"
#include "arch/grid_dependency.cuh"
#include "cp/segment_table.cuh"

namespace gdn::fused {
namespace {

using staged::kScanThreads;

// seg_first[n] = sum_{m < n} segment_count(m).
__global__ void __launch_bounds__(kScanThreads)
    scan_segment_counts(const int64_t* chunk_first, int64_t num_seqs, int seg_chunks,
                        int64_t* seg_first) {
  wait_for_prior_grids();
  staged::block_exclusive_scan(
      num_seqs, [&](int64_t n) { return segment_count(chunk_first, n, seg_chunks); }, seg_first);
}

__global__ void fill_segments(const int64_t* chunk_first, const int64_t* seg_first,
                              int64_t num_seqs, int seg_chunks, int64_t max_segs, Segment* segs) {
  wait_for_prior_grids();
  const int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= max_segs) return;
  segs[s] = segment_entry(chunk_first, seg_first, num_seqs, seg_chunks, s);
}

// 16 warps: warp w computes rows 16 (w % 8) .. + 15 of M h over half w / 8 of the depth (state
// rows 64 (w / 8) .. + 63). With 8 warps (one for both halves) a step's chain of dependent
// 3xTF32 mma issued 0.49 instructions per cycle and scheduler (ncu); split over
// two warps, each chain is half as long, but the fix-up took as long
// (docs/decisions/cp-fixup-warps.md): its steps are bound elsewhere (the barriers, the transfer copies).
constexpr int kFixWarpRows = 8;  // row blocks of 16
constexpr int kFixThreads = 2 * kFixWarpRows * 32;
constexpr int kLdM = kK + 4;      // M rows padded to 16-byte multiples: conflict-free ldmatrix

// State columns per fix-up CTA: 8, 16 or 32 (one, two or four n8 tiles per warp). A step's time
// is its tensor-core work (3xTF32 mma.sync), proportional to the columns, so narrow CTAs finish
// a step sooner; but every CTA holds a whole M (one CTA per SM), so the chain runs in one wave
// only while the CTAs fit the SMs. The launch plan picks the width (fixup_cols).
// B-fragment loads (rows t, t + 4 x columns g) hit 32 banks with a row stride of 8, 24 or 40.
template <int Cols>
constexpr int fixup_ld_h() { return Cols == 8 ? 8 : Cols + 8; }

// Shared memory of one fix-up CTA (148, 176 or 208 KB: one CTA per SM): M and the N columns of
// two segments (double-buffered: segment i + 1's copies land while step i runs), the running
// state columns h, and the second depth half's partial products (per row block: Cols / 8
// n-tiles x 4 accumulators x 32 lanes, in fragment order).
template <int Cols>
struct FixupSmem {
  static constexpr int kLdH = fixup_ld_h<Cols>();
  static constexpr int kMFloats = kK * kLdM, kNFloats = kK * kLdH;
  static constexpr int kPartialFloats = Cols / 8 * 4 * 32;
  float* base;  // m[0], m[1], n[0], n[1], h, partial
  __host__ __device__ static FixupSmem carve(staged::SmemCarver& c) {
    return {c.take(2 * kMFloats + 3 * kNFloats + kFixWarpRows * kPartialFloats)};
  }
  __device__ float* m(int b) const { return base + b * kMFloats; }  // 128 x 128, stride kLdM
  __device__ float* n(int b) const { return base + 2 * kMFloats + b * kNFloats; }  // 128 x Cols
  __device__ float* h() const { return base + 2 * kMFloats + 2 * kNFloats; }  // 128 x Cols
  __device__ float* partial(int row_block) const {
    return base + 2 * kMFloats + 3 * kNFloats + row_block * kPartialFloats;
  }
  static_assert(kMFloats % 4 == 0 && kNFloats % 4 == 0, "16-byte aligned tiles");
};

template <int Cols>
size_t fixup_smem_bytes() {
  staged::SmemCarver c{nullptr};
  FixupSmem<Cols>::carve(c);
  return c.used;
}

// Segment i's transfer M (all 128 x 128; with_m) and its N columns v0 .. v0 + Cols - 1 into
// buffer b, as one box of each of the fix-up's tensor maps of the transfer (fixup_maps: M rows
// of kLdM floats, N rows of kLdH, the padding columns arriving with them), completing on full
// (one thread). The tensor-map copies took the fix-up of 1x32768 at 16/16 from 19.6 to 17.9 us
// against every thread's cp.async of 16 bytes (ab_fixup_tma_call5.txt); row-by-row bulk copies,
// a TMA issue each, were 3-5 times slower (ab_fixup_copies_call4.txt), and clusters of two or
// four column blocks sharing one multicast copy of M slower too (18.9 and 35.2 us: the steps
// are not bound by the L2 reads of M).
// M comes from transfer row m_row0 (the step's own slot, or the forward's: TransferM).
template <int Cols>
__device__ __forceinline__ void load_transfer(const FixupSmem<Cols>& sm, int b, int64_t m_row0,
                                              int64_t n_row0, int v0, bool with_m,
                                              const CUtensorMap& m_map, const CUtensorMap& n_map,
                                              uint64_t* full) {
  constexpr uint32_t kMBytes = kK * kLdM * 4, kNBytes = kK * FixupSmem<Cols>::kLdH * 4;
  mbarrier_arrive_expect_tx(full, (with_m ? kMBytes : 0) + kNBytes);
  if (with_m) tma_load_2d(sm.m(b), &m_map, 0, static_cast<int>(m_row0), full);
  tma_load_2d(sm.n(b), &n_map, kV + v0, static_cast<int>(n_row0), full);
}

// acc = M_rows h over depth half `part` (the warp's 16 rows r0 .. r0 + 15 of M x state rows
// 64 part .. + 63 of the NT n-tiles of h) with 3xTF32 split operands (M split once per k-step
// for all NT n-tiles): 8 k-steps of three dependent mma each. kTransposed: the tile m holds
// M's transpose (TransferM::ForwardTransposed), read column-wise. The caller sums the halves
// (the first half's warp adds the second's), as one warp's two accumulator chains were summed
// before: the same sums in the same order.
template <int NT, bool kTransposed>
__device__ __forceinline__ void mh_half_product(float (&acc)[NT][4], const float* m, int r0,
                                                const float* h, int part) {
  constexpr int kLdH = fixup_ld_h<NT * 8>();
  constexpr int kHalf = kK / 16;  // k-steps of 8 state rows per half
#pragma unroll 2
  for (int s = 0; s < kHalf; ++s) {
    const int ks = s + part * kHalf;
    const float* a = kTransposed ? m + 8 * ks * kLdM + r0 : m + r0 * kLdM + 8 * ks;
    staged::inverse64::mma_3xtf32_step_tiles<NT, kTransposed>(acc, a, kLdM, h + 8 * ks * kLdH,
                                                              kLdH);
  }
}

// One CTA per (sequence, v-head, Cols-column block). The first segment's N began at h0 in pass
// 1 (load_start_element), so it is the second segment's start as it is (no M product, no M
// loaded). Step i > first: h = M_i h + N_i (M_i h on the tensor cores with 3xTF32 split
// operands: fp32 FFMA order of accuracy, common/chunk_math.cuh; M split once per k-step for the
// warp's n-tiles), h written as the start of segment i + 1. The transfers are independent of
// h, so segment i + 1's copies run during step i. kForwardM: M as TransferM::ForwardTransposed.
template <int Cols, bool kForwardM>
__global__ void __launch_bounds__(kFixThreads)
    cp_fixup_kernel(Dims d, const int64_t* seg_first, const __grid_constant__ CUtensorMap m_map,
                    const __grid_constant__ CUtensorMap n_map, float* starts) {
  wait_for_prior_grids();
  constexpr int kLdH = FixupSmem<Cols>::kLdH;
  const int64_t n = blockIdx.x;
  const int h = blockIdx.y;
  const int v0 = blockIdx.z * Cols;
  const int64_t first = seg_first[n], last = seg_first[n + 1];
  if (last - first < 2) return;  // one segment: its start is h0, read by the main pass
  extern __shared__ __align__(128) char smem_raw[];  // tensor-map copies land 128-byte aligned
  __shared__ __align__(8) uint64_t full[2];  // buffer b's copies landed
  staged::SmemCarver carver{smem_raw};
  const FixupSmem<Cols> sm = FixupSmem<Cols>::carve(carver);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int row_block = warp % kFixWarpRows, part = warp / kFixWarpRows;
  if (threadIdx.x == 0) {
    mbarrier_init(&full[0], 1);
    mbarrier_init(&full[1], 1);
    fence_mbarrier_init();
  }
  __syncthreads();  // the barriers initialised before any thread waits on them
  const auto row_of = [&](int64_t i) { return (i * d.Hv + h) * kK; };  // transfer row of slot i
  const auto m_row_of = [&](int64_t i) { return row_of(kForwardM ? first + last - 1 - i : i); };
  if (threadIdx.x == 0)
    load_transfer(sm, 0, m_row_of(first), row_of(first), v0, false, m_map, n_map, &full[0]);
  uint32_t parities = 0;  // bit b: the phase parity of buffer b's next wait
  const int r0 = 16 * row_block;  // this warp's rows
  for (int64_t i = first; i + 1 < last; ++i) {
    const int b = static_cast<int>((i - first) % 2);
    // The next step's transfer, into the other buffer (free since step i - 1's last barrier).
    if (i + 2 < last && threadIdx.x == 0)
      load_transfer(sm, 1 - b, m_row_of(i + 1), row_of(i + 1), v0, true, m_map, n_map,
                    &full[1 - b]);
    mbarrier_wait_parity(&full[b], (parities >> b) & 1u);
    parities ^= 1u << b;
    __syncthreads();  // h of the previous step complete
    float acc[Cols / 8][4] = {};
    float* const partial = sm.partial(row_block) + lane;  // fragment order, lane-interleaved
    if (i != first) {
      mh_half_product<Cols / 8, kForwardM>(acc, sm.m(b), r0, sm.h(), part);
      if (part == 1)
#pragma unroll
        for (int nt = 0; nt < Cols / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) partial[32 * (4 * nt + e)] = acc[nt][e];
    }
    // N_i's values of this warp's fragment, read before the barrier: past it, a warp may
    // start the next step and refill buffer b with segment i + 2's transfer.
    float2 nv[Cols / 8][2];
    if (part == 0)
#pragma unroll
      for (int nt = 0; nt < Cols / 8; ++nt)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          nv[nt][half] = *reinterpret_cast<const float2*>(
              sm.n(b) + (r0 + g + 8 * half) * kLdH + 8 * nt + 2 * t);
    __syncthreads();  // every warp's reads of h and of buffer b done; the partials written
    if (part == 1) continue;  // (warp-uniform; it meets the next step's barriers as the others)
    if (i != first)
#pragma unroll
      for (int nt = 0; nt < Cols / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[nt][e] += partial[32 * (4 * nt + e)];
    float* out = starts + ((i + 1) * d.Hv + h) * int64_t(kK * kV) + v0;
#pragma unroll
    for (int nt = 0; nt < Cols / 8; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = r0 + g + 8 * half, c = 8 * nt + 2 * t;
        const float2 next = make_float2(acc[nt][2 * half] + nv[nt][half].x,
                                        acc[nt][2 * half + 1] + nv[nt][half].y);
        *reinterpret_cast<float2*>(sm.h() + r * kLdH + c) = next;
        *reinterpret_cast<float2*>(out + r * kV + c) = next;
      }
  }
}

// The fix-up's tensor maps of transfer [max_segs Hv K rows, 2 K] fp32: boxes of K rows x kLdM
// columns (M's, and 4 of N's riding along), from m_transfer, and of K rows x kLdH columns
// (N's, from K + v0), from transfer.
template <int Cols>
cudaError_t fixup_maps(const Dims& d, const float* transfer, const float* m_transfer,
                       int64_t max_segs, CUtensorMap* m_map, CUtensorMap* n_map) {
  const int64_t rows = max_segs * d.Hv * kK;
  cudaError_t err = encode_f32_tile_map(m_map, m_transfer, rows, 2 * kV, kK, kLdM);
  if (err == cudaSuccess)
    err = encode_f32_tile_map(n_map, transfer, rows, 2 * kV, kK, FixupSmem<Cols>::kLdH);
  return err;
}

template <int Cols>
cudaError_t launch_cp_fixup_cols(const Dims& d, const int64_t* seg_first, const float* transfer,
                                 int64_t max_segs, float* starts, TransferM m,
                                 cudaStream_t stream, const float* m_transfer) {
  CUtensorMap m_map, n_map;
  cudaError_t err = fixup_maps<Cols>(d, transfer, m_transfer, max_segs, &m_map, &n_map);
  if (err != cudaSuccess) return err;
  const auto kernel = m == TransferM::ForwardTransposed ? cp_fixup_kernel<Cols, true>
                                                        : cp_fixup_kernel<Cols, false>;
  const size_t smem = fixup_smem_bytes<Cols>();
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(d.num_seqs), d.Hv, kV / Cols);
  return launch_after_prior(kernel, grid, kFixThreads, smem, stream, d, seg_first, m_map, n_map,
                            starts);
}

}  // namespace

cudaError_t build_segment_table(const Dims& d, int seg_chunks, const int64_t* chunk_first,
                                int64_t* seg_first, Segment* segs, int64_t max_segs,
                                cudaStream_t stream) {
  cudaError_t err = launch_after_prior(scan_segment_counts, 1, kScanThreads, 0, stream,
                                       chunk_first, d.num_seqs, seg_chunks, seg_first);
  if (err == cudaSuccess && max_segs > 0) {
    const int threads = 256;
    const int64_t blocks = (max_segs + threads - 1) / threads;
    err = launch_after_prior(fill_segments, static_cast<unsigned>(blocks), threads, 0, stream,
                             chunk_first, static_cast<const int64_t*>(seg_first), d.num_seqs,
                             seg_chunks, max_segs, segs);
  }
  return err;
}

cudaError_t launch_cp_fixup(const Dims& d, const int64_t* seg_first, const float* transfer,
                            int64_t max_segs, float* starts, int cols, TransferM m,
                            cudaStream_t stream, const float* m_transfer) {
  const float* const m_src = m_transfer ? m_transfer : transfer;
  switch (cols) {
    case 8: return launch_cp_fixup_cols<8>(d, seg_first, transfer, max_segs, starts, m, stream, m_src);
    case 16: return launch_cp_fixup_cols<16>(d, seg_first, transfer, max_segs, starts, m, stream, m_src);
    case 32: return launch_cp_fixup_cols<32>(d, seg_first, transfer, max_segs, starts, m, stream, m_src);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gdn::fused
