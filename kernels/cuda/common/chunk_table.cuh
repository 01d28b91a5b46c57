// The chunk index table, built on the device from cu_seqlens (or from B x T when there is
// none) so that no call ever copies sequence lengths to the host.
#pragma once

#include "common/offset_scan.cuh"
#include "common/problem.cuh"

namespace gdn::staged {

// Upper bound on the number of chunks: sum_n ceil(len_n / 64) <= (Ttot + 63 N) / 64.
// Exact without cu_seqlens (N sequences of length T).
int64_t max_chunks(const gdn_problem& p);

// Fills chunk_first [N + 1] (first chunk index of each sequence; chunk_first[N] = real chunk
// count) and table [max_chunks] (unused tail entries get len == 0), and zeroes ready
// [max_chunks + kClaimInts] when given (ChunkWorkspace::ready, then its claims). Two launches
// on stream.
cudaError_t build_chunk_table(const gdn_problem& p, const Dims& d, int64_t* chunk_first,
                              ChunkInfo* table, cudaStream_t stream, int* ready = nullptr);

// Token range [begin, end) of sequence n, read on the device.
struct SeqBounds {
  const void* cu_seqlens;  // nullptr: sequence n is [n T, (n + 1) T)
  bool cu_int64;
  int64_t T;
  __device__ __forceinline__ int64_t begin(int64_t n) const {
    if (!cu_seqlens) return n * T;
    return cu_int64 ? static_cast<const int64_t*>(cu_seqlens)[n]
                    : int64_t(static_cast<const int32_t*>(cu_seqlens)[n]);
  }
};

// Chunks of sequence n: ceil(len_n / 64).
__device__ __forceinline__ int64_t chunk_count(const SeqBounds& seqs, int64_t n) {
  return (seqs.begin(n + 1) - seqs.begin(n) + kC - 1) / kC;
}

// Entry c of the table, from the scanned chunk_first [num_seqs + 1]: tok_begin, seq and len
// of chunk c, or {0, 0, 0} past the real chunk count.
__device__ __forceinline__ ChunkInfo chunk_entry(const SeqBounds& seqs, int64_t num_seqs,
                                                 const int64_t* chunk_first, int64_t c) {
  ChunkInfo info{0, 0, 0};
  if (c < chunk_first[num_seqs]) {
    const int64_t lo = owner_of(chunk_first, num_seqs, c);  // skips zero-length sequences
    const int64_t begin = seqs.begin(lo) + (c - chunk_first[lo]) * kC;
    const int64_t end = seqs.begin(lo + 1);
    info.tok_begin = begin;
    info.seq = static_cast<int32_t>(lo);
    info.len = static_cast<int32_t>(end - begin < kC ? end - begin : kC);
  }
  return info;
}

}  // namespace gdn::staged
