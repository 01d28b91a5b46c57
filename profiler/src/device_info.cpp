// Device facts from the CUDA runtime (+ NVML clock, + CUPTI support through the backend).
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "cupti_backend.hpp"
#include "gdn/profiler/device_info.hpp"
#include "gdn/profiler/timing.hpp"

namespace gdn::profiler {
namespace {

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess)
    throw std::runtime_error(what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

int attribute(cudaDeviceAttr a, int ordinal, const char* name) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, a, ordinal), std::string("cudaDeviceGetAttribute(") + name + ")");
  return v;
}

}  // namespace

int cuda_device_count(std::string* reason) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky, but keep later checks clean
    if (reason) *reason = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && reason) *reason = "the driver reports no CUDA device";
  return n;
}

DeviceInfo query_device(int ordinal) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (ordinal < 0 || ordinal >= n)
    throw std::invalid_argument("device ordinal: expected 0.." + std::to_string(n - 1) + ", got " +
                                std::to_string(ordinal) + (n == 0 ? " (" + why + ")" : ""));
  DeviceInfo d;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  d.name = prop.name;
  std::array<unsigned char, 16> uuid{};
  for (std::size_t i = 0; i < uuid.size(); ++i) uuid[i] = static_cast<unsigned char>(prop.uuid.bytes[i]);
  d.uuid = format_uuid(uuid);
  char bus[32] = {};
  check(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal), "cudaDeviceGetPCIBusId");
  d.pci_bus_id = bus;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.sm_clock_peak_khz = attribute(cudaDevAttrClockRate, ordinal, "ClockRate");
  d.mem_clock_peak_khz = attribute(cudaDevAttrMemoryClockRate, ordinal, "MemoryClockRate");
  d.mem_bus_width_bits = prop.memoryBusWidth;
  d.total_memory_bytes = prop.totalGlobalMem;
  d.l2_bytes = prop.l2CacheSize;
  d.persisting_l2_max_bytes = prop.persistingL2CacheMaxSize;
  d.shared_per_sm_bytes = static_cast<int>(prop.sharedMemPerMultiprocessor);
  d.shared_per_block_optin_bytes = static_cast<int>(prop.sharedMemPerBlockOptin);
  d.registers_per_sm = prop.regsPerMultiprocessor;
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  check(cudaDriverGetVersion(&d.driver_version), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&d.runtime_version), "cudaRuntimeGetVersion");
  const ClockReading clock = read_sm_clock(ordinal);
  d.sm_clock_now_mhz = clock.sm_clock_mhz.value_or(0);
  d.cupti = detail::query_cupti_support(ordinal);
  return d;
}

std::vector<DeviceInfo> query_devices() {
  std::vector<DeviceInfo> out;
  const int n = cuda_device_count();
  for (int i = 0; i < n; ++i) out.push_back(query_device(i));
  return out;
}

}  // namespace gdn::profiler
