#include <cuda_runtime_api.h>

#include "gdn/profiler/launch.hpp"

namespace gdn::profiler {

MeasurementError::MeasurementError(const std::string& operation, cudaError_t code)
    : std::runtime_error(operation + " failed: " + cudaGetErrorName(code) + " (" +
                         cudaGetErrorString(code) + ")"),
      code_(code) {}

bool built_with_cupti() noexcept { return GDN_WITH_CUPTI != 0; }

}  // namespace gdn::profiler
