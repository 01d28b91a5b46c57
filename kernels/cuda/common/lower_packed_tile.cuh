// The lower-packed layout of a lower-triangular 64 x 64 16-bit tile (T and P of the prepare
// kernel, the column-warp loop's B operands of Vd^T = W'^T T^T and O^T += Vd^T P^T, both read
// k-major: tile rows = the product's n, tile columns = its depth).
//
// Depth step kk (tile columns 16 kk .. 16 kk + 15) of such a product meets only tile rows
// r >= 16 kk: above them the tile is zero. In global memory the layout keeps exactly those
// rows, as four slabs one after the other, slab kk = rows 16 kk .. 63 x the step's 16 columns:
//   slab kk: (64 - 16 kk) rows x 32 bytes at byte slab_offset(kk), 2048, 1536, 1024, 512 B
//            long (5120 B in all, against 8192 B for the whole tile: 3/8 fewer bytes written by
//            the prepare kernel and read through DRAM and L2 by every chunk-loop pass)
// and each slab is 32-byte swizzled (the two 16-byte halves of row r swapped when (r / 4) is
// odd: byte address bit 4 XOR bit 7 of the wgmma 32-byte swizzle mode, with every slab on a
// 256-byte boundary so that the tile row's own index gives the bit).
// In shared memory each slab is a whole canonical K-major operand of the 32-byte swizzle
// mode (64 rows x 32 bytes, 8-row atoms of 256 B one after the other: stride-byte offset 256)
// at smem_slab_offset(kk) = 2048 kk: its rows 0 .. 16 kk - 1 are zeroed once per CTA and the
// copies land only rows 16 kk .. 63 (copy_offset(kk)), four bulk copies per tile. The products
// stay m64n64k16 on one accumulator: narrower products into its upper columns (skipping
// the zero rows) made ptxas serialise every wgmma of the loop (C7511).
#pragma once

#include <cstdint>

#include "arch/host_device.cuh"

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
  GDN_HOST_DEVICE static constexpr uint32_t slab_bytes(int kk) {
    return kRowBytes * uint32_t(kRows - kSlabCols * kk);
  }
  static constexpr uint32_t kBytes = lower_packed_slab_offset(kSlabs);  // in global memory
  // The shared-memory operand image: slab kk whole (its zero rows too) at 2048 kk.
  static constexpr uint32_t kSmemSlabBytes = kRows * kRowBytes;
  static constexpr uint32_t kSmemBytes = kSlabs * kSmemSlabBytes;
  GDN_HOST_DEVICE static constexpr uint32_t smem_slab_offset(int kk) { return kSmemSlabBytes * uint32_t(kk); }
  // Where slab kk's copy lands in the image (its row 16 kk), and the zero rows before it.
  GDN_HOST_DEVICE static constexpr uint32_t copy_offset(int kk) {
    return smem_slab_offset(kk) + kRowBytes * uint32_t(kSlabCols * kk);
  }
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
