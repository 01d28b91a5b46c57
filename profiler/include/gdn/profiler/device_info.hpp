// What `gdnlab devices` prints and every result row carries as provenance: read from the
// device, never literals.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gdn::profiler {

struct CuptiSupport {
  bool built_with_cupti = false;
  std::uint32_t cupti_api_version = 0;  // cuptiGetVersion; 0 when unknown
  std::string chip_name;                // cuptiDeviceGetChipName, e.g. "GH100"
  bool range_profiler_supported = false;  // cuptiProfilerDeviceSupported(RANGE_PROFILING)
  bool pm_sampling_supported = false;     // cuptiProfilerDeviceSupported(PM_SAMPLING)
  bool counters_available = false;        // cuptiProfilerGetCounterAvailability succeeded
  std::string reason;  // "" when all of the above are true; otherwise what blocked which
};

struct DeviceInfo {
  int ordinal = -1;
  std::string name;
  std::string uuid;         // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints
  std::string pci_bus_id;   // "0000:18:00.0"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int sm_clock_peak_khz = 0;    // cudaDevAttrClockRate
  int mem_clock_peak_khz = 0;   // cudaDevAttrMemoryClockRate
  int mem_bus_width_bits = 0;
  std::size_t total_memory_bytes = 0;
  int l2_bytes = 0;
  int persisting_l2_max_bytes = 0;
  int shared_per_sm_bytes = 0;
  int shared_per_block_optin_bytes = 0;
  int registers_per_sm = 0;
  int max_threads_per_sm = 0;
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  unsigned sm_clock_now_mhz = 0;  // NVML, 0 when unreadable
  CuptiSupport cupti;
};

// Number of CUDA devices; 0 (and *reason set, if given) when there is no usable device/driver.
int cuda_device_count(std::string* reason = nullptr);
// Throws std::invalid_argument for an ordinal out of range, std::runtime_error on a CUDA error.
DeviceInfo query_device(int ordinal);
std::vector<DeviceInfo> query_devices();

// Pure helpers (tested on CPU).
std::string format_uuid(const std::array<unsigned char, 16>& bytes);
std::string format_cuda_version(int version);  // 13000 -> "13.0", 12080 -> "12.8"
// Multi-line human-readable block, as `gdnlab devices` prints it.
std::string describe(const DeviceInfo& d);

}  // namespace gdn::profiler
