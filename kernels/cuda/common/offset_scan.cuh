// Offsets of variable-sized items on the device, without a host round trip: an exclusive scan
// of per-item counts by one block, and the search of the item that owns a given offset. The
// chunk table (chunks per sequence, common/chunk_table.cu) and the CP segment table (segments per
// sequence, cp/fixup.cu) are both built from them.
#pragma once

#include <cstdint>

namespace gdn::staged {

inline constexpr int kScanThreads = 1024;  // the one block of a scan

// out[n] = sum_{m < n} count_of(m) for n < num, out[num] = the total. Called by every thread
// of a kScanThreads-thread block (the only block); it walks the items 1024 at a time with a
// warp scan, then a scan of the warp totals by warp 0, carrying the running total.
template <class CountOf>
__device__ __forceinline__ void block_exclusive_scan(int64_t num, CountOf count_of, int64_t* out) {
  __shared__ int64_t warp_totals[kScanThreads / 32];
  __shared__ int64_t carry;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int64_t base = 0; base < num; base += kScanThreads) {
    const int64_t n = base + threadIdx.x;
    const int64_t count = n < num ? count_of(n) : 0;
    int64_t x = count;  // inclusive within the warp
    for (int off = 1; off < 32; off <<= 1) {
      const int64_t y = __shfl_up_sync(0xffffffffu, x, off);
      if (lane >= off) x += y;
    }
    if (lane == 31) warp_totals[warp] = x;
    __syncthreads();
    if (warp == 0) {
      int64_t w = warp_totals[lane];
      for (int off = 1; off < 32; off <<= 1) {
        const int64_t y = __shfl_up_sync(0xffffffffu, w, off);
        if (lane >= off) w += y;
      }
      warp_totals[lane] = w;  // inclusive over the warps
    }
    __syncthreads();
    const int64_t before = carry + (warp > 0 ? warp_totals[warp - 1] : 0) + x - count;
    if (n < num) out[n] = before;
    __syncthreads();
    if (threadIdx.x == kScanThreads - 1) carry = before + count;
    __syncthreads();
  }
  if (threadIdx.x == 0) out[num] = carry;
}

// Exclusive prefix sum over the calling warp's lanes (lane n's count; every lane calls), and
// the warp's total.
__device__ __forceinline__ int64_t warp_exclusive_scan(int64_t count, int lane, int64_t& total) {
  int64_t x = count;
  for (int off = 1; off < 32; off <<= 1) {
    const int64_t y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  total = __shfl_sync(0xffffffffu, x, 31);
  return x - count;
}

// The last n in [0, num) with first[n] <= x, for ascending first[] (num >= 1). Items with a
// zero count share their successor's offset and are skipped, since the last one is taken.
__device__ __forceinline__ int64_t owner_of(const int64_t* first, int64_t num, int64_t x) {
  int64_t lo = 0, hi = num - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (first[mid] <= x)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace gdn::staged
