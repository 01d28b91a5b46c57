// Exact intra-card context parallelism of the fused family (gdn.md section 3, lever 2):
// the device-built segment table, and the sequential fix-up h_{i+1} = M_i h_i + N_i that turns
// the per-segment transfers [M | N] of pass 1 into the start state of every segment.
#include "block_tile.cuh"
#include "fused_kernels.cuh"
#include "offset_scan.cuh"

namespace gdn::fused {
namespace {

using staged::kScanThreads;

__device__ __forceinline__ int64_t segment_count(const int64_t* chunk_first, int64_t n,
                                                 int seg_chunks) {
  const int64_t chunks = chunk_first[n + 1] - chunk_first[n];
  const int64_t count = (chunks + seg_chunks - 1) / seg_chunks;
  return count > 0 ? count : 1;  // an empty sequence still gets one (empty) segment: ht = h0
}

// seg_first[n] = sum_{m < n} segment_count(m).
__global__ void __launch_bounds__(kScanThreads)
    scan_segment_counts(const int64_t* chunk_first, int64_t num_seqs, int seg_chunks,
                        int64_t* seg_first) {
  staged::block_exclusive_scan(
      num_seqs, [&](int64_t n) { return segment_count(chunk_first, n, seg_chunks); }, seg_first);
}

__global__ void fill_segments(const int64_t* chunk_first, const int64_t* seg_first,
                              int64_t num_seqs, int seg_chunks, int64_t max_segs, Segment* segs) {
  const int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= max_segs) return;
  Segment out{0, 0, 0, 0};
  if (s < seg_first[num_seqs]) {
    const int64_t lo = staged::owner_of(seg_first, num_seqs, s);  // seg_first[lo] <= s < ...[lo+1]
    const int64_t i = s - seg_first[lo];
    const int64_t count = seg_first[lo + 1] - seg_first[lo];
    const int64_t begin = chunk_first[lo] + i * seg_chunks;
    const int64_t end = begin + seg_chunks < chunk_first[lo + 1] ? begin + seg_chunks
                                                                 : chunk_first[lo + 1];
    out.chunk_begin = begin;
    out.chunk_end = end > begin ? end : begin;
    out.seq = static_cast<int32_t>(lo);
    out.flags = Segment::kUsed | (i == 0 ? Segment::kFirst : 0) |
                (i == count - 1 ? Segment::kLast : 0);
  }
  segs[s] = out;
}

constexpr int kFixThreads = 256;
constexpr int kFixCols = 32;  // state columns per fix-up CTA

struct FixupSmem {
  staged::SmemMat m, h;  // 128 x 128 transition, 128 x 32 running state
  __host__ __device__ static FixupSmem carve(staged::SmemCarver& c) {
    FixupSmem f;
    f.m = {c.take(kK * (kK + 1)), kK + 1};
    f.h = {c.take(kK * (kFixCols + 1)), kFixCols + 1};
    return f;
  }
};

size_t fixup_smem_bytes() {
  staged::SmemCarver c{nullptr};
  FixupSmem::carve(c);
  return c.used;
}

// One CTA per (sequence, v-head, 32-column block); fp32 throughout so that chaining many
// segments adds no rounding beyond the recurrence's own.
__global__ void __launch_bounds__(kFixThreads)
    cp_fixup_kernel(Dims d, const float* h0, const int64_t* seg_first, const float* transfer,
                    float* starts) {
  const int64_t n = blockIdx.x;
  const int h = blockIdx.y;
  const int v0 = blockIdx.z * kFixCols;
  const int64_t first = seg_first[n], last = seg_first[n + 1];
  if (last - first < 2) return;  // one segment: its start is h0, read by the main pass
  extern __shared__ __align__(16) char smem_raw[];
  staged::SmemCarver carver{smem_raw};
  const FixupSmem sm = FixupSmem::carve(carver);
  staged::block_for(kK * kFixCols, [&](int e) {
    const int r = e / kFixCols, c = e % kFixCols;
    sm.h(r, c) = h0 ? h0[staged::state_index(d, n, h, r, v0 + c)] : 0.f;
  });
  for (int64_t i = first; i + 1 < last; ++i) {
    const float* tr = transfer + (i * d.Hv + h) * int64_t(kK * 2 * kV);
    staged::block_for(kK * kK, [&](int e) {
      const int r = e / kK, c = e % kK;
      sm.m(r, c) = tr[r * (2 * kV) + c];
    });
    __syncthreads();
    staged::BlockTile<kK, kFixCols, kFixThreads> acc;
    acc.zero();
    acc.mma(kK, [&](int r, int kk) { return sm.m(r, kk); },
            [&](int kk, int c) { return sm.h(kk, c); });
    __syncthreads();  // every read of h and M is done
    float* out = starts + ((i + 1) * d.Hv + h) * int64_t(kK * kV);
    acc.each([&](int r, int c, float& x) {
      const float next = x + tr[r * (2 * kV) + kV + v0 + c];
      sm.h(r, c) = next;
      out[r * kV + v0 + c] = next;
    });
  }
}

}  // namespace

cudaError_t build_segment_table(const Dims& d, int seg_chunks, const int64_t* chunk_first,
                                int64_t* seg_first, Segment* segs, int64_t max_segs,
                                cudaStream_t stream) {
  scan_segment_counts<<<1, kScanThreads, 0, stream>>>(chunk_first, d.num_seqs, seg_chunks,
                                                       seg_first);
  if (max_segs > 0) {
    const int threads = 256;
    const int64_t blocks = (max_segs + threads - 1) / threads;
    fill_segments<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
        chunk_first, seg_first, d.num_seqs, seg_chunks, max_segs, segs);
  }
  return cudaGetLastError();
}

cudaError_t launch_cp_fixup(const Dims& d, const float* h0, const int64_t* seg_first,
                            const float* transfer, float* starts, cudaStream_t stream) {
  const size_t smem = fixup_smem_bytes();
  cudaError_t err = cudaFuncSetAttribute(cp_fixup_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(d.num_seqs), d.Hv, kV / kFixCols);
  cp_fixup_kernel<<<grid, kFixThreads, smem, stream>>>(d, h0, seg_first, transfer, starts);
  return cudaGetLastError();
}

}  // namespace gdn::fused
