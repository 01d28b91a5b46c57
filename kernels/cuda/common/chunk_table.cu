// Device-side chunk table: a single-block scan of per-sequence chunk counts, then one thread
// per table entry locating its sequence by binary search over the scanned offsets.
#include "common/chunk_table.cuh"
#include "arch/grid_dependency.cuh"
#include "staged/params.cuh"

namespace gdn::staged {
namespace {

// chunk_first[n] = sum_{m < n} ceil(len_m / 64).
__global__ void __launch_bounds__(kScanThreads) scan_chunk_counts(SeqBounds seqs, int64_t num_seqs,
                                                                 int64_t* chunk_first) {
  wait_for_prior_grids();
  block_exclusive_scan(num_seqs, [&](int64_t n) { return chunk_count(seqs, n); }, chunk_first);
}

__global__ void fill_chunk_table(SeqBounds seqs, int64_t num_seqs, const int64_t* chunk_first,
                                 int64_t table_size, ChunkInfo* table, int* ready) {
  wait_for_prior_grids();
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  static_assert(kClaimInts <= 256, "block 0 (256 threads) zeroes the claims after the counts");
  if (ready && c < kClaimInts) ready[table_size + c] = 0;
  if (c >= table_size) return;
  table[c] = chunk_entry(seqs, num_seqs, chunk_first, c);
  if (ready) ready[c] = 0;
}

}  // namespace

int64_t max_chunks(const gdn_problem& p) {
  if (!p.cu_seqlens) return p.B * ((p.T + kC - 1) / kC);
  return (p.T + (kC - 1) * p.num_seqs) / kC;
}

cudaError_t build_chunk_table(const gdn_problem& p, const Dims& d, int64_t* chunk_first,
                              ChunkInfo* table, cudaStream_t stream, int* ready) {
  const SeqBounds seqs{p.cu_seqlens, p.cu_seqlens_dtype == GDN_INT64, p.T};
  cudaError_t err = launch_after_prior(scan_chunk_counts, 1, kScanThreads, 0, stream, seqs,
                                       d.num_seqs, chunk_first);
  if (err == cudaSuccess && d.max_chunks > 0) {
    const int threads = 256;
    const int64_t blocks = (d.max_chunks + threads - 1) / threads;
    err = launch_after_prior(fill_chunk_table, static_cast<unsigned>(blocks), threads, 0, stream,
                             seqs, d.num_seqs, static_cast<const int64_t*>(chunk_first),
                             d.max_chunks, table, ready);
  }
  return err;
}

}  // namespace gdn::staged
