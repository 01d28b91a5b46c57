// Small CUPTI helpers shared by the activity timer, range profiler and PM sampler: error text,
// the current CUcontext, RAII for the profiler and host objects, metric config images and
// metric evaluation.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gdn::profiler::detail {

// A CUPTI call failed: what() = "<call>: CUPTI_ERROR_X (<CUPTI's message>)". Caught inside the
// profiler and turned into an "unavailable" reason; never escapes the public API.
class CuptiFailure : public std::runtime_error {
 public:
  CuptiFailure(const std::string& call, CUptiResult r);
  CUptiResult result() const noexcept { return result_; }

 private:
  CUptiResult result_;
};

std::string cupti_error_text(CUptiResult r);
inline void cupti_check(CUptiResult r, const char* call) {
  if (r != CUPTI_SUCCESS) throw CuptiFailure(call, r);
}

// The current CUDA context (made current by the runtime), through the driver entry point so
// that the library does not link libcuda (absent on build machines). Throws CuptiFailure-like
// std::runtime_error if unavailable.
CUcontext current_context();

// cuptiProfilerInitialize once per process and kept (as in the probe that ran on the H200:
// range profiler and PM sampling then share it). Retried on the next call after a failure.
void ensure_profiler_initialized();

std::string chip_name(int device);  // cuptiDeviceGetChipName, e.g. "GH100"

// Throws CuptiFailure with the support details when the API is not supported on the device.
void require_device_support(int device, CUpti_Profiler_API api, const char* api_name);

// Counter-availability image of the current context (filters counters the host cannot read).
std::vector<std::uint8_t> counter_availability();

// A host object (metric names -> config image, counter data -> values) for one profiler type.
class HostObject {
 public:
  HostObject(CUpti_ProfilerType type, const std::string& chip,
             const std::vector<std::uint8_t>& availability);
  ~HostObject();
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

struct MetricConfig {
  std::vector<const char*> names;          // the accepted metric names, in request order
  std::vector<std::string> rejected;       // "name: reason" of every rejected metric
  std::vector<bool> accepted;              // parallel to the request
  std::vector<std::uint8_t> image;         // config image of the accepted names
  std::size_t passes = 0;
};

// Builds the config image of the requested names; a name the host rejects (unknown on this
// chip, counter unavailable) is left out and explained. Throws CuptiFailure if none remain.
MetricConfig build_metric_config(CUpti_ProfilerType type, const std::string& chip,
                                 const std::vector<std::uint8_t>& availability,
                                 const std::vector<const char*>& requested);

// Evaluates `names` for one range (range profiler) or sample (PM sampling) of a counter image.
std::vector<double> evaluate_metrics(const HostObject& host, const std::vector<std::uint8_t>& counter_data,
                                     std::size_t index, const std::vector<const char*>& names);

}  // namespace gdn::profiler::detail
