// The C API path on a real device: dispatch, stream-ordered workspace, the workspace check.
// Numerics are the kernel tests' job; here inputs are zeros and only statuses are checked.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "api_test_support.hpp"

namespace {

using gdn::api_test::fails_with;

// Device buffers of a forward call for B = 1, T, Hk = 2, Hv = 8, K = V = 128, bf16, zeros.
class DeviceForward : public ::testing::Test {
 protected:
  static constexpr int64_t kTokens = 200;

  void SetUp() override {
    if (!gdn_device_available()) GTEST_SKIP() << "skipped: no CUDA device";
    gdn_problem_init(&p_, 1, kTokens, 2, 8, 128, 128);
    if (gdn_fwd_variant_name(&p_) == nullptr)
      GTEST_SKIP() << "no forward variant compiled: " << gdn_last_error();
    a_.q = alloc(kTokens * 2 * 128 * 2);
    a_.k = alloc(kTokens * 2 * 128 * 2);
    a_.v = alloc(kTokens * 8 * 128 * 2);
    a_.g = static_cast<const float*>(alloc(kTokens * 8 * 4));
    a_.beta = alloc(kTokens * 8 * 4);
    a_.o = alloc(kTokens * 8 * 128 * 2);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }

  void TearDown() override {
    for (void* b : buffers_) cudaFree(b);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  void* alloc(size_t bytes) {
    void* ptr = nullptr;
    EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr, 0, bytes), cudaSuccess);
    buffers_.push_back(ptr);
    return ptr;
  }

  gdn_problem p_{};
  gdn_fwd_args a_{};
  cudaStream_t stream_ = nullptr;
  std::vector<void*> buffers_;
};

TEST_F(DeviceForward, RunsWithALibraryAllocatedWorkspace) {
  EXPECT_EQ(gdn_fwd(&p_, &a_, stream_), GDN_OK) << gdn_last_error();
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

TEST_F(DeviceForward, RunsWithACallerWorkspaceOfTheReportedSize) {
  const size_t bytes = gdn_fwd_workspace_size(&p_);
  a_.workspace = bytes > 0 ? alloc(bytes) : nullptr;
  a_.workspace_bytes = bytes;
  EXPECT_EQ(gdn_fwd(&p_, &a_, stream_), GDN_OK) << gdn_last_error();
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

TEST_F(DeviceForward, RejectsATooSmallWorkspace) {
  if (gdn_fwd_workspace_size(&p_) == 0) GTEST_SKIP() << "the chosen variant needs no workspace";
  a_.workspace = alloc(16);
  a_.workspace_bytes = 1;
  EXPECT_TRUE(fails_with(gdn_fwd(&p_, &a_, stream_), GDN_ERROR_WORKSPACE,
                         {"gdn_fwd", "a->workspace_bytes", "got 1 bytes"}));
}

TEST_F(DeviceForward, NamesTheVariantItWouldUse) {
  const char* name = gdn_fwd_variant_name(&p_);
  ASSERT_NE(name, nullptr) << gdn_last_error();
  EXPECT_EQ(std::string(name).rfind("gdn_fwd_sm90_", 0), 0u) << name;
}

// A misaligned pointer reaching a TMA kernel leaves a sticky error that poisons the process:
// it is refused before any launch, and the context stays usable for the next call.
TEST_F(DeviceForward, RejectsAMisalignedPointerBeforeLaunchAndStaysUsable) {
  gdn_fwd_args bad = a_;
  bad.q = static_cast<const char*>(a_.q) + 2;
  EXPECT_TRUE(fails_with(gdn_fwd(&p_, &bad, stream_), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd", "a->q", "16-byte aligned", "2 bytes past"}));
  bad = a_;
  bad.ht = static_cast<float*>(alloc(2 * 8 * 128 * 128 * 4 + 16)) + 1;
  EXPECT_TRUE(fails_with(gdn_fwd(&p_, &bad, stream_), GDN_ERROR_INVALID_ARGUMENT, {"a->ht", "4 bytes past"}));
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(gdn_fwd(&p_, &a_, stream_), GDN_OK) << gdn_last_error();
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

TEST_F(DeviceForward, RejectsAnOutputSharingAnInputBeforeLaunch) {
  gdn_fwd_args bad = a_;
  bad.o = const_cast<void*>(a_.v);  // same size as o: an in-place call
  EXPECT_TRUE(fails_with(gdn_fwd(&p_, &bad, stream_), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd", "a->o", "the same address as a->v"}));
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

TEST_F(DeviceForward, RejectsAHostPointerBeforeLaunch) {
  int pageable = 0, device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device), cudaSuccess);
  if (pageable) GTEST_SKIP() << "this device reads pageable host memory (HMM/ATS): host pointers are legal here";
  std::vector<float4> host(kTokens * 2 * 128 * 2 / sizeof(float4));  // 16-byte aligned host memory
  gdn_fwd_args bad = a_;
  bad.k = host.data();
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p_, &bad), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_validate_fwd", "a->k", "ordinary host memory"}));
  EXPECT_TRUE(fails_with(gdn_fwd(&p_, &bad, stream_), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_fwd", "a->k", "ordinary host memory"}));
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  EXPECT_EQ(gdn_fwd(&p_, &a_, stream_), GDN_OK) << gdn_last_error();
  EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
}

}  // namespace
