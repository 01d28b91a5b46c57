#include <stdexcept>
#include <string>

#include "gdn/profiler/pm_sampling.hpp"

namespace gdn::profiler {

void validate(const PmOptions& o) {
  auto reject = [](const char* field, const char* expected, const std::string& got) {
    throw std::invalid_argument(std::string("PmOptions.") + field + ": expected " + expected +
                                ", got " + got);
  };
  // CUPTI's GPU-time trigger does not go below 1 us usefully; 1 s would give no timeline.
  if (o.interval_ns < 1000 || o.interval_ns > 1000000000ull)
    reject("interval_ns", "1000 .. 1000000000 (1 us .. 1 s)", std::to_string(o.interval_ns));
  if (o.calls < 1) reject("calls", ">= 1", std::to_string(o.calls));
  if (o.max_samples < 1) reject("max_samples", ">= 1", std::to_string(o.max_samples));
  if (o.hardware_buffer_bytes < (1ull << 20))
    reject("hardware_buffer_bytes", ">= 1 MiB", std::to_string(o.hardware_buffer_bytes));
}

}  // namespace gdn::profiler
