// One entry of the CP segment table (forward/kernels.cuh: build_segment_table), as device
// functions shared by the table's own kernels and the one-launch table builder.
#pragma once

#include "forward/params.cuh"
#include "common/offset_scan.cuh"

namespace gdn::fused {

// Segments of sequence n: ceil(chunks_n / seg_chunks), at least one (an empty sequence still
// gets one, empty, segment: ht = h0).
__device__ __forceinline__ int64_t segment_count(const int64_t* chunk_first, int64_t n,
                                                 int seg_chunks) {
  const int64_t chunks = chunk_first[n + 1] - chunk_first[n];
  const int64_t count = (chunks + seg_chunks - 1) / seg_chunks;
  return count > 0 ? count : 1;
}

// Entry s of the table from the scanned seg_first [num_seqs + 1]; flags == 0 past the real
// segment count.
__device__ __forceinline__ Segment segment_entry(const int64_t* chunk_first,
                                                 const int64_t* seg_first, int64_t num_seqs,
                                                 int seg_chunks, int64_t s) {
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
  return out;
}

}  // namespace gdn::fused
