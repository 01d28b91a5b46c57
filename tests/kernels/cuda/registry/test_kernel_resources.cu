// The resident-CTA arithmetic behind Variant::Resources::ctas_per_sm (no device needed), on
// the H200's SM limits and the fused chunk loop's real shared-memory sizes.
#include <gtest/gtest.h>

#include "backward/fused_bwd.cuh"
#include "forward/params.cuh"
#include "registry/kernel_resources.hpp"

namespace {

// sm_90 (H100/H200): 228 KiB shared per SM, 1 KiB reserved per CTA, 64 Ki registers, 2048
// threads, 32 CTAs.
constexpr gdn::SmLimits kHopper{233472, 1024, 65536, 2048, 32};

TEST(ResidentCtas, UnknownInputsGiveUnknown) {
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, -1, 1000, 128), -1);
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 64, -1, 128), -1);
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 64, 1000, 0), -1);
}

TEST(ResidentCtas, EachLimitBinds) {
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 32, 0, 32), 32);      // CTA slots
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 32, 0, 1024), 2);     // threads
  // registers: 191 -> 192 per thread, 6144 per warp, 24576 per 4-warp CTA: 2 fit, not 3.
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 191, 0, 128), 2);
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 168, 0, 128), 3);
  // shared memory: (113 KiB + 1 KiB reserve) twice fits in 228 KiB, 114 KiB does not.
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 32, 113 * 1024, 128), 2);
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 32, 114 * 1024, 128), 1);
}

// The point of the fused shared-memory layout: a 32-column, 2-stage chunk loop leaves room
// for a second CTA on the SM; wider or deeper ones do not.
TEST(ResidentCtas, FusedChunkLoopLayouts) {
  using gdn::fused::FusedSmem;
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 191, static_cast<int>(FusedSmem<32>::bytes(2)), 128),
            2);
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 191, static_cast<int>(FusedSmem<32>::bytes(3)), 128),
            1);
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 249, static_cast<int>(FusedSmem<64>::bytes(2)), 128),
            1);
}

// The fused backward kernel: one CTA of 512 threads per SM, its 128 registers per thread at
// launch (the roles' setmaxnreg counts add up to the register file), its shared memory under
// the per-CTA limit, and the tiles the producer's copies fill adding up to its two input
// groups' transaction bytes.
TEST(ResidentCtas, FusedBackwardKernelLayout) {
  using gdn::bwd::FusedSmem;
  const int smem = static_cast<int>(FusedSmem::bytes());
  EXPECT_LE(smem, 227 * 1024) << "over the per-CTA opt-in limit";
  EXPECT_EQ(gdn::resident_ctas_per_sm(kHopper, 128, smem, gdn::bwd::kFusedThreads), 1);
  // Group A: q, v, dO and S^T; group B: k, T and the gates: every input tile once.
  EXPECT_EQ(FusedSmem::kTxA, 3 * FusedSmem::kRowsBytes + FusedSmem::kStateBytes);
  EXPECT_EQ(FusedSmem::kTxB, FusedSmem::kRowsBytes + FusedSmem::kSquareBytes + FusedSmem::kGateBytes);
  EXPECT_EQ(FusedSmem::kTxA + FusedSmem::kTxB, 4 * FusedSmem::kRowsBytes + FusedSmem::kSquareBytes +
                                                   FusedSmem::kStateBytes + FusedSmem::kGateBytes);
  // Every tile on a 1024-byte boundary (wgmma's 128-byte swizzle atoms), none overlapping.
  const size_t tiles[] = {FusedSmem::kS,  FusedSmem::kDs,  FusedSmem::kQ,   FusedSmem::kKt,
                          FusedSmem::kVt, FusedSmem::kDo,  FusedSmem::kVn,  FusedSmem::kDvn,
                          FusedSmem::kEdw, FusedSmem::kT,  FusedSmem::kP,   FusedSmem::kDpm,
                          FusedSmem::kDtz, FusedSmem::kVec};
  for (size_t i = 0; i < std::size(tiles); ++i) {
    EXPECT_EQ(tiles[i] % 1024, 0u) << "tile " << i;
    if (i > 0) EXPECT_GT(tiles[i], tiles[i - 1]) << "tile " << i;
  }
  EXPECT_LT(FusedSmem::kVec + FusedSmem::kGateBytes + 64 * 4, FusedSmem::kSums + 1);
}

}  // namespace
