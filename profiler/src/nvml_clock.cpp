// SM clock through NVML, opened with dlopen: libnvidia-ml ships with the driver (absent on
// build machines), and the toolkit has no nvml.h here, so the few entry points used are
// declared below with NVML's documented C ABI (nvmlReturn_t is an int, 0 = success).
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "gdn/profiler/timing.hpp"

namespace gdn::profiler {
namespace {

using nvml_device = void*;
using fn_init = int (*)();
using fn_by_bus_id = int (*)(const char*, nvml_device*);
using fn_clock = int (*)(nvml_device, int, unsigned*);
using fn_reasons = int (*)(nvml_device, unsigned long long*);
constexpr int nvml_clock_sm = 1;  // NVML_CLOCK_SM

// Clock event reasons that mean the clock was held down (NVML_CLOCKS_EVENT_REASON_*):
// SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40, HW power brake 0x80.
// Idle (0x1) and application-clock settings (0x2) are not throttling.
constexpr unsigned long long throttling_reasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

struct Nvml {
  std::string error;  // non-empty: unusable, with the reason
  fn_by_bus_id by_bus_id = nullptr;
  fn_clock clock = nullptr;
  fn_reasons reasons = nullptr;
};

const Nvml& nvml() {
  static Nvml api;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      api.error = std::string("NVML not loadable: ") + dlerror();
      return;
    }
    auto init = reinterpret_cast<fn_init>(dlsym(lib, "nvmlInit_v2"));
    api.by_bus_id = reinterpret_cast<fn_by_bus_id>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    api.clock = reinterpret_cast<fn_clock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    api.reasons = reinterpret_cast<fn_reasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!api.reasons)  // older drivers: the same function under its former name
      api.reasons = reinterpret_cast<fn_reasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !api.by_bus_id || !api.clock) {
      api.error = "NVML lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2/nvmlDeviceGetClockInfo";
      return;
    }
    if (const int rc = init(); rc != 0) api.error = "nvmlInit_v2 returned " + std::to_string(rc);
  });
  return api;
}

}  // namespace

ClockReading read_sm_clock(int device_ordinal) {
  ClockReading r;
  const Nvml& api = nvml();
  if (!api.error.empty()) {
    r.unavailable_reason = api.error;
    return r;
  }
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device_ordinal) != cudaSuccess) {
    cudaGetLastError();
    r.unavailable_reason = "cudaDeviceGetPCIBusId failed for device " + std::to_string(device_ordinal);
    return r;
  }
  nvml_device dev = nullptr;
  if (const int rc = api.by_bus_id(bus, &dev); rc != 0) {
    r.unavailable_reason = "nvmlDeviceGetHandleByPciBusId_v2(" + std::string(bus) + ") returned " +
                           std::to_string(rc);
    return r;
  }
  unsigned mhz = 0;
  if (const int rc = api.clock(dev, nvml_clock_sm, &mhz); rc != 0) {
    r.unavailable_reason = "nvmlDeviceGetClockInfo returned " + std::to_string(rc);
    return r;
  }
  r.sm_clock_mhz = mhz;
  unsigned long long reasons = 0;
  if (api.reasons && api.reasons(dev, &reasons) == 0) {
    r.event_reasons = reasons;
    r.throttled = (reasons & throttling_reasons) != 0;
  }
  return r;
}

}  // namespace gdn::profiler
