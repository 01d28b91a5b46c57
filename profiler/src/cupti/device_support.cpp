// CUPTI facts for `gdnlab devices`: chip, profiler/PM-sampling support, counter access.
#include <cupti.h>

#include "cupti_backend.hpp"
#include "cupti_common.hpp"

namespace gdn::profiler::detail {
namespace {

void note(std::string& reason, const std::string& what) {
  if (!reason.empty()) reason += "; ";
  reason += what;
}

}  // namespace

CuptiSupport query_cupti_support(int ordinal) {
  CuptiSupport s;
  s.built_with_cupti = true;
  cuptiGetVersion(&s.cupti_api_version);
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(ordinal);  // counter availability reads the current context
  try {
    ensure_profiler_initialized();
    s.chip_name = chip_name(ordinal);
    try {
      require_device_support(ordinal, CUPTI_PROFILER_RANGE_PROFILING, "range profiler");
      s.range_profiler_supported = true;
    } catch (const std::exception& e) {
      note(s.reason, e.what());
    }
    try {
      require_device_support(ordinal, CUPTI_PROFILER_PM_SAMPLING, "PM sampling");
      s.pm_sampling_supported = true;
    } catch (const std::exception& e) {
      note(s.reason, e.what());
    }
    try {
      s.counters_available = !counter_availability().empty();
    } catch (const std::exception& e) {
      note(s.reason, std::string("counters: ") + e.what());
    }
  } catch (const std::exception& e) {
    note(s.reason, e.what());
  }
  cudaSetDevice(previous);
  return s;
}

}  // namespace gdn::profiler::detail
