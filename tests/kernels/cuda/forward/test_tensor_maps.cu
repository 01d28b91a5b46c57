// The tensor-map encoders (forward/tensor_maps.cuh) on the device's driver: the views the
// kernels take are accepted, and every argument outside what the kernels' signed 32-bit box
// coordinates and 128-byte swizzle allow is refused with cudaErrorInvalidValue before the
// driver's encoder is asked (rows past 2^31 - 1 never reach it).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "device_harness.hpp"
#include "forward/tensor_maps.cuh"

namespace gdn::fused {
namespace {

using gdn::testing::gpu::DeviceBuffer;
using gdn::testing::gpu::hopper_available;

class TensorMaps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  }
};

TEST_F(TensorMaps, Rows16MapsTakeTheChainsViewsAndRefuseOthers) {
  // 256 rows of 128 16-bit columns: Xq's view (128-row boxes) and T's (64 columns, 64 rows).
  DeviceBuffer buf(256 * 128 * 2);
  CUtensorMap map{};
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), 256, 128, 128, true), cudaSuccess);
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), 512, 64, 64, false), cudaSuccess);
  // Columns other than 64 and 128, boxes of 0 or more than 256 rows, no rows, rows past the
  // int32 coordinates, a base off 16-byte alignment.
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), 256, 32, 64, true), cudaErrorInvalidValue);
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), 256, 128, 0, true), cudaErrorInvalidValue);
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), 256, 128, 257, true), cudaErrorInvalidValue);
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), 0, 128, 64, true), cudaErrorInvalidValue);
  EXPECT_EQ(encode_rows16_map(&map, buf.get(), int64_t(1) << 31, 128, 64, true), cudaErrorInvalidValue);
  EXPECT_EQ(encode_rows16_map(&map, static_cast<char*>(buf.get()) + 2, 128, 128, 64, true),
            cudaErrorInvalidValue);
}

TEST_F(TensorMaps, TokenTileMapsRefuseTokensPastTheCoordinateRange) {
  DeviceBuffer buf(64 * 2 * 128 * 2);
  CUtensorMap map{};
  EXPECT_EQ(encode_token_tile_map(&map, buf.get(), 2, 64, true), cudaSuccess);
  EXPECT_EQ(encode_token_tile_map(&map, buf.get(), 2, kMaxTmaTokens + 1, true), cudaErrorInvalidValue);
  EXPECT_EQ(encode_token_tile_map(&map, buf.get(), 0, 64, true), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace gdn::fused
