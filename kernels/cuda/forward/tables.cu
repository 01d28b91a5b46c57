// The fused forward's index tables in one launch: the chunk table (with the prepare kernel's
// ready counts zeroed) and, with CP, the segment table, scanned and filled by one block. Each
// launch in the forward's chain costs a few microseconds however little it does, and the
// separate builders take two launches per table; the one-block path serves every problem whose
// tables are small enough for one block to fill quickly, the separate builders the rest. A
// problem of at most 32 sequences and a few thousand chunks (every anchor row) takes a
// one-warp kernel: shuffle scans and shared arrays, no block barrier.
#include "common/chunk_table.cuh"
#include "forward/kernels.cuh"
#include "arch/grid_dependency.cuh"
#include "cp/segment_table.cuh"

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

// The one-warp path's limits: a lane per sequence; entries filled 64 per lane at most.
constexpr int64_t kWarpSeqs = 32;
constexpr int64_t kWarpEntries = 64 * 32;

// The tables of at most kWarpSeqs sequences by one warp, entry for entry those of
// build_tables_kernel: lane n reads sequence n's bounds once; the offsets (chunk_first,
// seg_first) are scanned with shuffles and kept in shared memory for the entries' searches.
__global__ void __launch_bounds__(32)
    build_tables_warp_kernel(staged::SeqBounds seqs, int num_seqs, int64_t max_chunks,
                             int64_t* chunk_first, ChunkInfo* table, int* ready, int seg_chunks,
                             int64_t max_segs, int64_t* seg_first, Segment* segs) {
  __shared__ int64_t bounds[kWarpSeqs + 1], cf[kWarpSeqs + 1], sf[kWarpSeqs + 1];
  wait_for_prior_grids();
  const int lane = static_cast<int>(threadIdx.x);
  const bool mine = lane < num_seqs;
  const int64_t b0 = mine ? seqs.begin(lane) : 0, b1 = mine ? seqs.begin(lane + 1) : 0;
  int64_t total = 0;
  const int64_t first = staged::warp_exclusive_scan(mine ? (b1 - b0 + kC - 1) / kC : 0, lane, total);
  if (mine) {
    bounds[lane] = b0;
    cf[lane] = first;
    chunk_first[lane] = first;
  }
  if (lane == num_seqs - 1) bounds[num_seqs] = b1;
  if (lane == 0) {
    cf[num_seqs] = total;
    chunk_first[num_seqs] = total;
  }
  __syncwarp();
  const staged::SeqBounds staged_seqs{bounds, true, seqs.T};
  for (int64_t c = lane; c < max_chunks; c += 32) {
    table[c] = staged::chunk_entry(staged_seqs, num_seqs, cf, c);
    if (ready) ready[c] = 0;
  }
  if (ready)  // the exclusive overlap's SM claims follow the counts (staged::kClaimInts)
    for (int c = lane; c < staged::kClaimInts; c += 32) ready[max_chunks + c] = 0;
  if (seg_chunks <= 0) return;  // uniform
  const int64_t sfirst =
      staged::warp_exclusive_scan(mine ? segment_count(cf, lane, seg_chunks) : 0, lane, total);
  if (mine) {
    sf[lane] = sfirst;
    seg_first[lane] = sfirst;
  }
  if (lane == 0) {
    sf[num_seqs] = total;
    seg_first[num_seqs] = total;
  }
  __syncwarp();
  for (int64_t s = lane; s < max_segs; s += 32)
    segs[s] = segment_entry(cf, sf, num_seqs, seg_chunks, s);
}

}  // namespace

bool tables_fit_one_block(int64_t max_chunks, int seg_chunks, int64_t max_segs) {
  return max_chunks <= kOneBlockEntries && (seg_chunks <= 0 || max_segs <= kOneBlockEntries);
}

bool tables_fit_one_warp(int64_t num_seqs, int64_t max_chunks, int seg_chunks, int64_t max_segs) {
  return num_seqs <= kWarpSeqs && max_chunks <= kWarpEntries &&
         (seg_chunks <= 0 || max_segs <= kWarpEntries);
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
  if (tables_fit_one_warp(d.num_seqs, d.max_chunks, seg_chunks, max_segs))
    return launch_after_prior(build_tables_warp_kernel, 1, 32, 0, stream, seqs,
                              static_cast<int>(d.num_seqs), d.max_chunks, chunk_first, table,
                              ready, seg_chunks, max_segs, seg_first, segs);
  return launch_after_prior(build_tables_kernel, 1, kScanThreads, 0, stream, seqs, d.num_seqs,
                            d.max_chunks, chunk_first, table, ready, seg_chunks, max_segs,
                            seg_first, segs);
}

}  // namespace gdn::fused
