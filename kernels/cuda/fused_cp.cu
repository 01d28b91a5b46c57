// Exact intra-card context parallelism of the fused family (gdn.md section 3, lever 2):
// the device-built segment table, and the sequential fix-up h_{i+1} = M_i h_i + N_i that turns
// the per-segment transfers [M | N] of pass 1 into the start state of every segment.
#include "chunk_math.cuh"  // inverse64::mma_3xtf32
#include "fused_kernels.cuh"
#include "grid_dependency.cuh"
#include "segment_table.cuh"

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

constexpr int kFixThreads = 256;  // 8 warps: warp w computes rows 16 w .. 16 w + 15
constexpr int kFixCols = 16;      // state columns per fix-up CTA (two n8 tiles per warp)
constexpr int kLdM = kK + 4;      // M rows padded to 16-byte multiples: conflict-free ldmatrix
constexpr int kLdH = kFixCols + 8;  // B-fragment loads (rows t, t + 4 x columns g) hit 32 banks

// Shared memory of one fix-up CTA (172 KB, one CTA per SM): M and the N columns of two
// segments (double-buffered: segment i + 1's copies land while step i runs) and the running
// state columns h.
struct FixupSmem {
  static constexpr int kMFloats = kK * kLdM, kNFloats = kK * kLdH;
  float* base;  // m[0], m[1], n[0], n[1], h
  __host__ __device__ static FixupSmem carve(staged::SmemCarver& c) {
    return {c.take(2 * kMFloats + 3 * kNFloats)};
  }
  __device__ float* m(int b) const { return base + b * kMFloats; }  // 128 x 128, stride kLdM
  __device__ float* n(int b) const { return base + 2 * kMFloats + b * kNFloats; }  // 128 x 16
  __device__ float* h() const { return base + 2 * kMFloats + 2 * kNFloats; }  // 128 x 16
};
static_assert(FixupSmem::kMFloats % 4 == 0 && FixupSmem::kNFloats % 4 == 0, "16-byte aligned tiles");

size_t fixup_smem_bytes() {
  staged::SmemCarver c{nullptr};
  FixupSmem::carve(c);
  return c.used;
}

// cp.async of segment i's transfer M (all 128 x 128) and its N columns v0 .. v0 + 15 into
// buffer b: 16-byte pieces, 32 per M row and 4 per N row, 18 per thread.
__device__ __forceinline__ void load_transfer(const FixupSmem& sm, int b, const float* tr, int v0) {
  constexpr int kMPieces = kK * kK / 4, kNPieces = kK * kFixCols / 4;
  for (int u = threadIdx.x; u < kMPieces + kNPieces; u += kFixThreads) {
    if (u < kMPieces) {
      const int r = u / (kK / 4), c = 4 * (u % (kK / 4));
      fused::cp_async_16(sm.m(b) + r * kLdM + c, tr + r * (2 * kV) + c, 16);
    } else {
      const int e = u - kMPieces, r = e / (kFixCols / 4), c = 4 * (e % (kFixCols / 4));
      fused::cp_async_16(sm.n(b) + r * kLdH + c, tr + r * (2 * kV) + kV + v0 + c, 16);
    }
  }
  fused::cp_async_commit();
}

// One CTA per (sequence, v-head, 16-column block). Step i: h = M_i h + N_i (M_i h on the tensor
// cores with 3xTF32 split operands: fp32 FFMA order of accuracy, chunk_math.cuh), h written as
// the start of segment i + 1. The transfers are independent of h, so segment i + 1's copies
// run during step i: a step costs its 96 mma per warp, not a trip to memory.
__global__ void __launch_bounds__(kFixThreads)
    cp_fixup_kernel(Dims d, const float* h0, const int64_t* seg_first, const float* transfer,
                    float* starts) {
  wait_for_prior_grids();
  const int64_t n = blockIdx.x;
  const int h = blockIdx.y;
  const int v0 = blockIdx.z * kFixCols;
  const int64_t first = seg_first[n], last = seg_first[n + 1];
  if (last - first < 2) return;  // one segment: its start is h0, read by the main pass
  extern __shared__ __align__(16) char smem_raw[];
  staged::SmemCarver carver{smem_raw};
  const FixupSmem sm = FixupSmem::carve(carver);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const auto transfer_of = [&](int64_t i) {
    return transfer + (i * d.Hv + h) * int64_t(kK * 2 * kV);
  };
  load_transfer(sm, 0, transfer_of(first), v0);
  for (int e = threadIdx.x; e < kK * kFixCols; e += kFixThreads) {
    const int r = e / kFixCols, c = e % kFixCols;
    sm.h()[r * kLdH + c] = h0 ? h0[staged::state_index(d, n, h, r, v0 + c)] : 0.f;
  }
  const int r0 = 16 * warp;  // this warp's rows
  for (int64_t i = first; i + 1 < last; ++i) {
    const int b = static_cast<int>((i - first) % 2);
    if (i + 2 < last) {  // the next step's transfer, into the other buffer (free since step i-1)
      load_transfer(sm, 1 - b, transfer_of(i + 1), v0);
      fused::cp_async_wait(1);
    } else {
      fused::cp_async_wait(0);
    }
    __syncthreads();  // M_i, N_i landed for every thread; h of the previous step complete
    float acc[kFixCols / 8][4] = {};
#pragma unroll
    for (int nt = 0; nt < kFixCols / 8; ++nt)
      staged::inverse64::mma_3xtf32(acc[nt], sm.m(b) + r0 * kLdM, kLdM, sm.h() + 8 * nt, kLdH, 0, kK / 8);
    __syncthreads();  // every warp's reads of h (and of buffer b) are done
    float* out = starts + ((i + 1) * d.Hv + h) * int64_t(kK * kV) + v0;
#pragma unroll
    for (int nt = 0; nt < kFixCols / 8; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = r0 + g + 8 * half, c = 8 * nt + 2 * t;
        const float2 nv = *reinterpret_cast<const float2*>(sm.n(b) + r * kLdH + c);
        const float2 next = make_float2(acc[nt][2 * half] + nv.x, acc[nt][2 * half + 1] + nv.y);
        *reinterpret_cast<float2*>(sm.h() + r * kLdH + c) = next;
        *reinterpret_cast<float2*>(out + r * kV + c) = next;
      }
  }
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

cudaError_t launch_cp_fixup(const Dims& d, const float* h0, const int64_t* seg_first,
                            const float* transfer, float* starts, cudaStream_t stream) {
  const size_t smem = fixup_smem_bytes();
  cudaError_t err = cudaFuncSetAttribute(cp_fixup_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(d.num_seqs), d.Hv, kV / kFixCols);
  return launch_after_prior(cp_fixup_kernel, grid, kFixThreads, smem, stream, d, h0, seg_first,
                            transfer, starts);
}

}  // namespace gdn::fused
