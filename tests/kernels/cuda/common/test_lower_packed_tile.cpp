// The lower-packed tile layout (common/lower_packed_tile.cuh), host only: the prepare kernel
// writes T and P through LowerPackedTile::offset, the column-warp loop copies the slabs into its zeroed
// operand images and reads them with wgmma through 32-byte-swizzle descriptors at
// smem_slab_offset(kk); these tests check the three agree, by walking the canonical K-major
// 32-byte-swizzle layout as the tensor cores address it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "common/lower_packed_tile.cuh"

namespace gdn::fused {
namespace {

using L = LowerPackedTile;

// The 32-byte swizzle of a shared-memory byte address: bit 4 XOR bit 7 (PTX ISA, wgmma
// matrix descriptor, swizzle mode 3; CUTLASS Swizzle<1,4,3> on byte addresses).
uint32_t swizzle32(uint32_t byte) { return byte ^ (((byte >> 7) & 1u) << 4); }

TEST(LowerPackedTile, EveryElementOnOrBelowTheDiagonalIsStored) {
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c <= r; ++c) EXPECT_TRUE(L::stored(r, c)) << r << ", " << c;
}

TEST(LowerPackedTile, StoredElementsFillThePackedBytesOnceEach) {
  std::set<int> offsets;
  int stored = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c) {
      if (!L::stored(r, c)) continue;
      ++stored;
      const int off = L::offset(r, c);
      ASSERT_GE(off, 0);
      ASSERT_LT(off, L::kElems);
      EXPECT_TRUE(offsets.insert(off).second) << "(" << r << ", " << c << ") collides";
    }
  EXPECT_EQ(stored, L::kElems);
  EXPECT_EQ(static_cast<int>(offsets.size()), L::kElems);
  EXPECT_EQ(L::kBytes, 5120u);  // 3/8 of the full tile's 8192 bytes dropped
}

TEST(LowerPackedTile, SlabsAreContiguousAndAtomAligned) {
  for (int kk = 0; kk < L::kSlabs; ++kk) {
    EXPECT_EQ(L::slab_offset(kk) % L::kAtomBytes, 0u) << kk;
    EXPECT_EQ(L::slab_offset(kk + 1) - L::slab_offset(kk), uint32_t(64 - 16 * kk) * L::kRowBytes)
        << kk;
    for (int r = 16 * kk; r < 64; ++r)
      for (int c = 16 * kk; c < 16 * kk + 16; ++c) {
        const uint32_t byte = 2u * uint32_t(L::offset(r, c));
        EXPECT_GE(byte, L::slab_offset(kk));
        EXPECT_LT(byte, L::slab_offset(kk + 1));
      }
  }
}

// What depth step kk's wgmma reads after the copies: the prepare kernel's tile (element ids
// at LowerPackedTile::offset) copied slab by slab to copy_offset(kk) of a zeroed operand image,
// then read as a K-major B operand of 64 rows x 16 depth elements from smem_slab_offset(kk),
// 8-row groups sbo = 256 bytes apart, rows 32 bytes apart, the 32-byte swizzle on the
// absolute byte address (a 1024-byte aligned image). Row n must be tile row n and depth k tile
// column 16 kk + k: the stored element, or a zero where the tile is zero (r < 16 kk).
TEST(LowerPackedTile, EachDepthStepReadsItsSlabAsA32ByteSwizzleOperand) {
  constexpr uint16_t kZero = 0xFFFF;  // an id no element has
  std::vector<uint16_t> global(L::kElems, 0);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c)
      if (L::stored(r, c)) global[L::offset(r, c)] = uint16_t(r * 64 + c);
  std::vector<uint16_t> image(L::kSmemBytes / 2, kZero);  // the zeroed prefixes (and more)
  for (int kk = 0; kk < L::kSlabs; ++kk) {
    ASSERT_LE(L::copy_offset(kk) + L::slab_bytes(kk), L::smem_slab_offset(kk + 1));
    std::copy_n(global.begin() + L::slab_offset(kk) / 2, L::slab_bytes(kk) / 2,
                image.begin() + L::copy_offset(kk) / 2);
  }
  for (int kk = 0; kk < L::kSlabs; ++kk)
    for (int n = 0; n < 64; ++n)
      for (int k = 0; k < 16; ++k) {
        const uint32_t linear =
            L::smem_slab_offset(kk) + uint32_t(n / 8) * L::kAtomBytes + uint32_t(n % 8) * 32u + 2u * k;
        const int c = 16 * kk + k;
        const uint16_t want = n >= 16 * kk ? uint16_t(n * 64 + c) : kZero;
        EXPECT_EQ(image[swizzle32(linear) / 2], want) << "step " << kk << ", row " << n << ", depth " << k;
      }
}

// The elements the layout drops are exactly those above the kept 16 x 16 diagonal blocks'
// columns: (r, c) with r < 16 (c / 16), all strictly above the diagonal (zeros of T and P).
TEST(LowerPackedTile, DroppedElementsLieAboveTheDiagonal) {
  int dropped = 0;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c)
      if (!L::stored(r, c)) {
        ++dropped;
        EXPECT_GT(c, r);
      }
  EXPECT_EQ(dropped, 64 * 64 - L::kElems);
}

}  // namespace
}  // namespace gdn::fused
