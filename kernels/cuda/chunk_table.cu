// Device-side chunk table: a single-block scan of per-sequence chunk counts, then one thread
// per table entry locating its sequence by binary search over the scanned offsets.
#include "chunk_table.cuh"

namespace gdn::staged {
namespace {

constexpr int kScanThreads = 1024;

// chunk_first[n] = sum_{m < n} ceil(len_m / 64); one block walks the sequences 1024 at a time.
__global__ void __launch_bounds__(kScanThreads) scan_chunk_counts(SeqBounds seqs, int64_t num_seqs,
                                                                 int64_t* chunk_first) {
  __shared__ int64_t warp_totals[kScanThreads / 32];
  __shared__ int64_t carry;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int64_t base = 0; base < num_seqs; base += kScanThreads) {
    const int64_t n = base + threadIdx.x;
    int64_t count = 0;
    if (n < num_seqs) count = (seqs.begin(n + 1) - seqs.begin(n) + kC - 1) / kC;
    // Inclusive warp scan, then scan of the warp totals by warp 0.
    int64_t x = count;
    for (int off = 1; off < 32; off <<= 1) {
      const int64_t y = __shfl_up_sync(0xffffffffu, x, off);
      if (lane >= off) x += y;
    }
    if (lane == 31) warp_totals[warp] = x;
    __syncthreads();
    if (warp == 0) {
      int64_t t = warp_totals[lane];
      for (int off = 1; off < 32; off <<= 1) {
        const int64_t y = __shfl_up_sync(0xffffffffu, t, off);
        if (lane >= off) t += y;
      }
      warp_totals[lane] = t;  // inclusive
    }
    __syncthreads();
    const int64_t before = carry + (warp > 0 ? warp_totals[warp - 1] : 0) + x - count;
    if (n < num_seqs) chunk_first[n] = before;
    __syncthreads();
    if (threadIdx.x == kScanThreads - 1) carry = before + count;
    __syncthreads();
  }
  if (threadIdx.x == 0) chunk_first[num_seqs] = carry;
}

__global__ void fill_chunk_table(SeqBounds seqs, int64_t num_seqs, const int64_t* chunk_first,
                                 int64_t table_size, ChunkInfo* table) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= table_size) return;
  ChunkInfo info{0, 0, 0};
  if (c < chunk_first[num_seqs]) {
    // Last n with chunk_first[n] <= c; zero-length sequences share their successor's offset
    // and are skipped because we take the last such n.
    int64_t lo = 0, hi = num_seqs - 1;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (chunk_first[mid] <= c)
        lo = mid;
      else
        hi = mid - 1;
    }
    const int64_t begin = seqs.begin(lo) + (c - chunk_first[lo]) * kC;
    const int64_t end = seqs.begin(lo + 1);
    info.tok_begin = begin;
    info.seq = static_cast<int32_t>(lo);
    info.len = static_cast<int32_t>(end - begin < kC ? end - begin : kC);
  }
  table[c] = info;
}

}  // namespace

int64_t max_chunks(const gdn_problem& p) {
  if (!p.cu_seqlens) return p.B * ((p.T + kC - 1) / kC);
  return (p.T + (kC - 1) * p.num_seqs) / kC;
}

cudaError_t build_chunk_table(const gdn_problem& p, const Dims& d, int64_t* chunk_first,
                              ChunkInfo* table, cudaStream_t stream) {
  const SeqBounds seqs{p.cu_seqlens, p.cu_seqlens_dtype == GDN_INT64, p.T};
  scan_chunk_counts<<<1, kScanThreads, 0, stream>>>(seqs, d.num_seqs, chunk_first);
  if (d.max_chunks > 0) {
    const int threads = 256;
    const int64_t blocks = (d.max_chunks + threads - 1) / threads;
    fill_chunk_table<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
        seqs, d.num_seqs, chunk_first, d.max_chunks, table);
  }
  return cudaGetLastError();
}

}  // namespace gdn::staged
