// The fused forward's index tables in one launch: the chunk table (with the prepare kernel's
// ready counts zeroed) and, with CP, the segment table, scanned and filled by one block. Each
// launch in the forward's chain costs a few microseconds however little it does, and the
// separate builders take two launches per table; the one-block path serves every problem whose
// tables are small enough for one block to fill quickly, the separate builders the rest.
#include "chunk_table.cuh"
#include "fused_kernels.cuh"
#include "grid_dependency.cuh"
#include "segment_table.cuh"

namespace gdn::fused {
namespace {

using staged::kScanThreads;

// Entries (chunks, or segments) one block fills: eight per thread at most, each a binary
// search over the sequences.
constexpr int64_t kOneBlockEntries = 8 * kScanThreads;

__global__ void __launch_bounds__(kScanThreads)
    build_tables_kernel(staged::SeqBounds seqs, int64_t num_seqs, int64_t max_chunks,
                        int64_t* chunk_first, ChunkInfo* table, int* ready, int seg_chunks,
                        int64_t max_segs, int64_t* seg_first, Segment* segs) {
  wait_for_prior_grids();
  staged::block_exclusive_scan(
      num_seqs, [&](int64_t n) { return staged::chunk_count(seqs, n); }, chunk_first);
  __syncthreads();  // the scan's global writes (the total by thread 0) seen by the block
  for (int64_t c = threadIdx.x; c < max_chunks; c += kScanThreads) {
    table[c] = staged::chunk_entry(seqs, num_seqs, chunk_first, c);
    if (ready) ready[c] = 0;
  }
  if (ready)  // the exclusive overlap's SM claims follow the counts (staged::kClaimInts)
    for (int c = threadIdx.x; c < staged::kClaimInts; c += kScanThreads) ready[max_chunks + c] = 0;
  if (seg_chunks <= 0) return;  // uniform
  staged::block_exclusive_scan(
      num_seqs, [&](int64_t n) { return segment_count(chunk_first, n, seg_chunks); }, seg_first);
  __syncthreads();
  for (int64_t s = threadIdx.x; s < max_segs; s += kScanThreads)
    segs[s] = segment_entry(chunk_first, seg_first, num_seqs, seg_chunks, s);
}

}  // namespace

bool tables_fit_one_block(int64_t max_chunks, int seg_chunks, int64_t max_segs) {
  return max_chunks <= kOneBlockEntries && (seg_chunks <= 0 || max_segs <= kOneBlockEntries);
}

cudaError_t build_tables(const gdn_problem& p, const Dims& d, int seg_chunks,
                         int64_t* chunk_first, ChunkInfo* table, int* ready, int64_t* seg_first,
                         Segment* segs, int64_t max_segs, cudaStream_t stream, TablesPath path) {
  if (path == TablesPath::PerTable || !tables_fit_one_block(d.max_chunks, seg_chunks, max_segs)) {
    cudaError_t err = staged::build_chunk_table(p, d, chunk_first, table, stream, ready);
    if (err == cudaSuccess && seg_chunks > 0)
      err = build_segment_table(d, seg_chunks, chunk_first, seg_first, segs, max_segs, stream);
    return err;
  }
  const staged::SeqBounds seqs{p.cu_seqlens, p.cu_seqlens_dtype == GDN_INT64, p.T};
  return launch_after_prior(build_tables_kernel, 1, kScanThreads, 0, stream, seqs, d.num_seqs,
                            d.max_chunks, chunk_first, table, ready, seg_chunks, max_segs,
                            seg_first, segs);
}

}  // namespace gdn::fused
