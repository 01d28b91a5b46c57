// Device discovery, cached: the first call per process (and per device ordinal) asks the CUDA
// runtime; later calls read the cache, so an entry point costs no extra driver round trips.
#include "device.hpp"

#include <array>
#include <mutex>
#include <optional>
#include <string>

#include "status.hpp"

namespace gdn::detail {

namespace {

constexpr int kRequiredMajor = 9;  // sm_90a kernels run on compute capability 9.0 only
constexpr int kRequiredMinor = 0;
constexpr int kMaxDevices = 64;    // ordinals beyond this are not cached, just re-queried

struct DeviceFacts {
  bool usable = false;
  std::string reason;  // why not usable; "" when usable
  int sm_count = 0;
  bool pageable_access = false;  // the device reads pageable host memory (HMM, ATS)
};

std::string cuda_error_text(cudaError_t e) {
  return cat(cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

DeviceFacts probe_device(int ordinal) {
  DeviceFacts f;
  int major = 0, minor = 0, sms = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // a failed query must not leak into the caller's next check
    f.reason = cat("cudaDeviceGetAttribute on device ", ordinal, " failed: ", cuda_error_text(e));
    return f;
  }
  if (major != kRequiredMajor || minor != kRequiredMinor) {
    f.reason = cat("device ", ordinal, " has compute capability ", major, ".", minor,
                   "; the kernels are built for sm_90a and need ", kRequiredMajor, ".",
                   kRequiredMinor);
    return f;
  }
  f.usable = true;
  f.sm_count = sms;
  int pageable = 0;
  if (cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, ordinal) != cudaSuccess)
    (void)cudaGetLastError();  // unknown: treated as "cannot", the stricter answer
  f.pageable_access = pageable != 0;
  return f;
}

const DeviceFacts& cached_device(int ordinal) {
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<DeviceFacts, kMaxDevices> facts;
  if (ordinal < 0 || ordinal >= kMaxDevices) {
    thread_local DeviceFacts uncached;
    uncached = probe_device(ordinal);
    return uncached;
  }
  std::call_once(once[ordinal], [&] { facts[ordinal] = probe_device(ordinal); });
  return facts[ordinal];
}

// Whether the runtime sees any device at all; decided once per process.
struct RuntimeFacts {
  bool has_device = false;
  std::string reason;
};

const RuntimeFacts& runtime_facts() {
  static const RuntimeFacts facts = [] {
    RuntimeFacts r;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      r.reason = cat("no usable CUDA device (cudaGetDeviceCount: ", cuda_error_text(e), ")");
    } else if (count == 0) {
      r.reason = "no CUDA device present (cudaGetDeviceCount returned 0)";
    } else {
      r.has_device = true;
    }
    return r;
  }();
  return facts;
}

gdn_status current_device(std::string_view where, const DeviceFacts** out) {
  const RuntimeFacts& runtime = runtime_facts();
  if (!runtime.has_device) return fail(GDN_ERROR_NOT_AVAILABLE, cat(where, ": ", runtime.reason));
  int ordinal = 0;
  if (cudaError_t e = cudaGetDevice(&ordinal); e != cudaSuccess)
    return cuda_failure(e, where, "cudaGetDevice");
  *out = &cached_device(ordinal);
  return GDN_OK;
}

}  // namespace

gdn_status cuda_failure(cudaError_t error, std::string_view where, std::string_view call) {
  return fail(GDN_ERROR_CUDA, cat(where, ": ", call, " failed: ", cuda_error_text(error)));
}

gdn_status require_device(std::string_view where) {
  const DeviceFacts* device = nullptr;
  if (gdn_status s = current_device(where, &device); s != GDN_OK) return s;
  if (!device->usable)
    return fail(GDN_ERROR_NOT_AVAILABLE, cat(where, ": no usable CUDA device: ", device->reason));
  return GDN_OK;
}

gdn_status current_sm_count(std::string_view where, int* sm_count) {
  const DeviceFacts* device = nullptr;
  if (gdn_status s = current_device(where, &device); s != GDN_OK) return s;
  if (!device->usable)
    return fail(GDN_ERROR_NOT_AVAILABLE, cat(where, ": no usable CUDA device: ", device->reason));
  *sm_count = device->sm_count;
  return GDN_OK;
}

std::optional<bool> usable_device_reads_pageable_memory() {
  if (!runtime_facts().has_device) return std::nullopt;
  int ordinal = 0;
  if (cudaGetDevice(&ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  const DeviceFacts& device = cached_device(ordinal);
  if (!device.usable) return std::nullopt;
  return device.pageable_access;
}

}  // namespace gdn::detail

extern "C" int gdn_device_available(void) {
  return gdn::detail::require_device("gdn_device_available") == GDN_OK ? 1 : 0;
}
