// Start-up trimming of PM-sampling timelines (pure).
#include "gdn/profiler/pm_sampling.hpp"

namespace gdn::profiler {

std::size_t count_startup_samples(std::span<const SampleSpan> spans, std::uint64_t interval_ns) {
  // 1.5 x: regular samples jitter around the interval; the start-up one is orders longer.
  const std::uint64_t longest_regular = interval_ns + interval_ns / 2;
  std::size_t n = 0;
  while (n < spans.size()) {
    const SampleSpan& s = spans[n];
    const std::uint64_t length = s.end_ns > s.start_ns ? s.end_ns - s.start_ns : 0;
    if (length != 0 && length <= longest_regular) break;
    ++n;
  }
  return n;
}

}  // namespace gdn::profiler
