// The lower-packed layout of a lower-triangular 64 x 64 16-bit tile (T and P of the prepare
// kernel, the column-warp loop's B operands of Vd^T = W'^T T^T and O^T += Vd^T P^T, both read
// k-major: tile rows = the product's n, tile columns = its depth).
//
// Depth step kk (tile columns 16 kk .. 16 kk + 15) of such a product meets only tile rows
// r >= 16 kk: above them the tile is zero. The layout keeps exactly those rows, as four slabs
// one after the other, slab kk = rows 16 kk .. 63 x the step's 16 columns:
//   slab kk: (64 - 16 kk) rows x 32 bytes, at byte slab_offset(kk) = 2048, 1536, 1024, 512 B
//            long (5120 B in all, against 8192 B for the whole tile)
// and each slab is a canonical wgmma K-major operand in the 32-byte swizzle mode: 8-row x
// 32-byte atoms (256 B, one after the other: stride-byte offset 256), the two 16-byte halves
// of row r swapped when (r / 4) is odd (byte address bit 4 XOR bit 7; every slab starts on a
// 256-byte boundary, so the tile row's own index gives the bit). A step's product then reads
// its slab from row 16 kk on as an n = 64 - 16 kk operand into the accumulator columns
// 16 kk .. 63 (wgmma_m64_lower_k16), skipping the products of zeros, and the tile moves as one
// 5120-byte linear bulk copy: 3/8 fewer bytes than the full tile through DRAM, L2 and shared
// memory. Every element the layout drops is an exact zero of the full tile (entries above
// the diagonal of T and P, and in the diagonal 16 x 16 blocks it keeps, the zeros above the
// diagonal stay stored).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GDN_HOST_DEVICE __host__ __device__
#else
#define GDN_HOST_DEVICE
#endif

namespace gdn::fused {

// Bytes before slab kk of a lower-packed tile: slabs 0 .. kk - 1 of 64 - 16 m rows x 32 bytes.
GDN_HOST_DEVICE constexpr uint32_t lower_packed_slab_offset(int kk) {
  return 32u * uint32_t(64 * kk - 8 * kk * (kk - 1));
}

struct LowerPackedTile {
  static constexpr int kRows = 64, kSlabCols = 16, kSlabs = 4;
  static constexpr uint32_t kRowBytes = kSlabCols * 2;  // 32
  static constexpr uint32_t kAtomBytes = 8 * kRowBytes;  // 256: the wgmma stride-byte offset
  GDN_HOST_DEVICE static constexpr uint32_t slab_offset(int kk) { return lower_packed_slab_offset(kk); }
  static constexpr uint32_t kBytes = lower_packed_slab_offset(kSlabs);
  static constexpr int kElems = int(kBytes / 2);
  // Whether element (r, c) is stored: its slab's first row is at or above it.
  GDN_HOST_DEVICE static constexpr bool stored(int r, int c) {
    return r >= kSlabCols * (c / kSlabCols);
  }
  // Element offset of (r, c) for a stored element (stored(r, c)).
  GDN_HOST_DEVICE static constexpr int offset(int r, int c) {
    const int kk = c / kSlabCols;
    const int half = ((c / 8) & 1) ^ ((r / 4) & 1);  // the 32-byte swizzle
    return int(slab_offset(kk) / 2) + (r - kSlabCols * kk) * kSlabCols + 8 * half + c % 8;
  }
};
static_assert(LowerPackedTile::kBytes == 5120, "2048 + 1536 + 1024 + 512 bytes");
static_assert(LowerPackedTile::slab_offset(3) % LowerPackedTile::kAtomBytes == 0 &&
                  LowerPackedTile::slab_offset(2) % LowerPackedTile::kAtomBytes == 0 &&
                  LowerPackedTile::slab_offset(1) % LowerPackedTile::kAtomBytes == 0,
              "every slab starts on a swizzle atom");

}  // namespace gdn::fused

#undef GDN_HOST_DEVICE
