// Helpers of the C API tests: a valid problem and argument structs to break one field at a
// time, and a matcher for the failure message.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

#include "gdn/gdn.h"

namespace gdn::api_test {

// Stand-in device addresses, 16-byte aligned and kSlotBytes apart so that the tensors of the
// test problems never overlap (validation refuses an output sharing memory). Validation never
// dereferences them, but with a usable device it asks where they point (host pointers are
// refused): there they lie inside one real device allocation.
inline constexpr std::uintptr_t kSlotBytes = std::uintptr_t{4} << 20;  // > every test tensor
inline constexpr std::uintptr_t kSlots = 128;
inline void* fake_device_pointer(std::uintptr_t slot) {
  static char* const base = [] {
    int count = 0;
    void* memory = nullptr;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 &&
        cudaMalloc(&memory, kSlotBytes * kSlots) == cudaSuccess)
      return static_cast<char*>(memory);
    (void)cudaGetLastError();
    return reinterpret_cast<char*>(std::uintptr_t{1} << 32);  // no device: any aligned address
  }();
  return base + kSlotBytes * (slot % kSlots);
}

// B = 2, T = 256, Hk = 2, Hv = 8, K = V = 128, bf16: valid everywhere.
inline gdn_problem valid_batched_problem() {
  gdn_problem p;
  gdn_problem_init(&p, 2, 256, 2, 8, 128, 128);
  return p;
}

// Three packed sequences 0+100+156 (T = 256) with a host copy of the offsets.
struct PackedProblem {
  int32_t offsets[4] = {0, 0, 100, 256};
  gdn_problem p;
  PackedProblem() {
    gdn_problem_init(&p, 1, 256, 2, 8, 128, 128);
    p.cu_seqlens = fake_device_pointer(99);
    p.cu_seqlens_host = offsets;
    p.cu_seqlens_dtype = GDN_INT32;
    p.num_seqs = 3;
  }
};

inline gdn_fwd_args valid_fwd_args() {
  gdn_fwd_args a{};
  a.q = fake_device_pointer(1);
  a.k = fake_device_pointer(2);
  a.v = fake_device_pointer(3);
  a.g = static_cast<const float*>(fake_device_pointer(4));
  a.beta = fake_device_pointer(5);
  a.o = fake_device_pointer(6);
  return a;
}

inline gdn_bwd_args valid_bwd_args() {
  gdn_bwd_args a{};
  a.q = fake_device_pointer(1);
  a.k = fake_device_pointer(2);
  a.v = fake_device_pointer(3);
  a.g = static_cast<const float*>(fake_device_pointer(4));
  a.beta = fake_device_pointer(5);
  a.d_o = fake_device_pointer(6);
  a.dq = fake_device_pointer(7);
  a.dk = fake_device_pointer(8);
  a.dv = fake_device_pointer(9);
  a.dg = static_cast<float*>(fake_device_pointer(10));
  a.dbeta = fake_device_pointer(11);
  return a;
}

// Asserts `status` equals `expected` and that gdn_last_error() contains every fragment
// (the argument's name, what was expected, what was given). Prints the message so that the
// test log shows it.
inline ::testing::AssertionResult fails_with(gdn_status status, gdn_status expected,
                                             std::initializer_list<std::string> fragments) {
  const std::string message = gdn_last_error();
  std::printf("    [%s] %s\n", gdn_status_string(status), message.c_str());
  if (status != expected)
    return ::testing::AssertionFailure()
           << "status " << gdn_status_string(status) << ", expected "
           << gdn_status_string(expected) << "; message: " << message;
  for (const std::string& f : fragments)
    if (message.find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks '" << f << "': " << message;
  return ::testing::AssertionSuccess();
}

}  // namespace gdn::api_test
