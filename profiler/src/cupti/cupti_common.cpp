#include "cupti_common.hpp"

#include <cuda_runtime_api.h>

#include <mutex>

namespace gdn::profiler::detail {

std::string cupti_error_text(CUptiResult r) {
  const char* name = nullptr;
  const char* message = nullptr;
  cuptiGetResultString(r, &name);
  cuptiGetErrorMessage(r, &message);
  std::string out = name ? name : "CUPTI error " + std::to_string(static_cast<int>(r));
  if (message && *message) out += std::string(" (") + message + ")";
  return out;
}

CuptiFailure::CuptiFailure(const std::string& call, CUptiResult r)
    : std::runtime_error(call + ": " + cupti_error_text(r)), result_(r) {}

CUcontext current_context() {
  using fn_ctx_get_current = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr) {
    cudaGetLastError();
    throw std::runtime_error("cuCtxGetCurrent: driver entry point not found");
  }
  cudaFree(nullptr);  // make sure the runtime has made its primary context current
  CUcontext ctx = nullptr;
  if (reinterpret_cast<fn_ctx_get_current>(fn)(&ctx) != CUDA_SUCCESS || ctx == nullptr)
    throw std::runtime_error("cuCtxGetCurrent: no current CUDA context");
  return ctx;
}

void ensure_profiler_initialized() {
  static std::mutex mutex;
  static bool initialized = false;
  std::lock_guard lock(mutex);
  if (initialized) return;
  CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  cupti_check(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
  initialized = true;
}

std::string chip_name(int device) {
  CUpti_Device_GetChipName_Params p{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  p.deviceIndex = static_cast<std::size_t>(device);
  cupti_check(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
  return p.pChipName ? p.pChipName : "";
}

void require_device_support(int device, CUpti_Profiler_API api, const char* api_name) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = device;
  p.api = api;
  cupti_check(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  auto level = [](CUpti_Profiler_Support_Level l) {
    switch (l) {
      case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
      case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
      case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
      default: return "unknown";
    }
  };
  throw std::runtime_error(std::string(api_name) + " not supported on device " + std::to_string(device) +
                           ": architecture " + level(p.architecture) + ", SLI " + level(p.sli) +
                           ", vGPU " + level(p.vGpu) + ", confidential compute " +
                           level(p.confidentialCompute) + ", CMP " + level(p.cmp) + ", WSL " +
                           level(p.wsl));
}

std::vector<std::uint8_t> counter_availability() {
  CUpti_Profiler_GetCounterAvailability_Params p{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  p.ctx = current_context();
  cupti_check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability(size)");
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  cupti_check(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  image.resize(p.counterAvailabilityImageSize);
  return image;
}

HostObject::HostObject(CUpti_ProfilerType type, const std::string& chip,
                       const std::vector<std::uint8_t>& availability) {
  CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  p.profilerType = type;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  cupti_check(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
  object_ = p.pHostObject;
}

HostObject::~HostObject() {
  CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  p.pHostObject = object_;
  cuptiProfilerHostDeinitialize(&p);
}

namespace {

CUptiResult add_metrics(const HostObject& host, const std::vector<const char*>& names) {
  CUpti_Profiler_Host_ConfigAddMetrics_Params p{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  p.pHostObject = host.get();
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&p);
}

}  // namespace

MetricConfig build_metric_config(CUpti_ProfilerType type, const std::string& chip,
                                 const std::vector<std::uint8_t>& availability,
                                 const std::vector<const char*>& requested) {
  MetricConfig c;
  c.accepted.assign(requested.size(), false);
  // Probe each name on a scratch host object so that one bad name does not sink the set.
  for (std::size_t i = 0; i < requested.size(); ++i) {
    HostObject probe(type, chip, availability);
    const CUptiResult r = add_metrics(probe, {requested[i]});
    if (r == CUPTI_SUCCESS) {
      c.accepted[i] = true;
      c.names.push_back(requested[i]);
    } else {
      c.rejected.push_back(std::string(requested[i]) + ": " + cupti_error_text(r));
    }
  }
  if (c.names.empty())
    throw std::runtime_error("no requested metric is available: " +
                             (c.rejected.empty() ? std::string("none requested") : c.rejected.front()));
  HostObject host(type, chip, availability);
  cupti_check(add_metrics(host, c.names), "cuptiProfilerHostConfigAddMetrics");
  CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host.get();
  cupti_check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  c.image.resize(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  image.pHostObject = host.get();
  image.pConfigImage = c.image.data();
  image.configImageSize = c.image.size();
  cupti_check(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.pConfigImage = c.image.data();
  passes.configImageSize = c.image.size();
  cupti_check(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
  c.passes = passes.numOfPasses;
  return c;
}

std::vector<double> evaluate_metrics(const HostObject& host, const std::vector<std::uint8_t>& counter_data,
                                     std::size_t index, const std::vector<const char*>& names) {
  std::vector<double> values(names.size(), 0.0);
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  p.pHostObject = host.get();
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = index;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  cupti_check(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues");
  return values;
}

}  // namespace gdn::profiler::detail
