#include "sampling_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gdn::profiler::detail {

int next_batch_size(const Protocol& p, int taken, double elapsed_ms, double ms_per_sample) {
  if (taken == 0) return 1;
  int n = taken < p.min_samples ? p.min_samples - taken : 8;
  n = std::min(n, p.max_samples - taken);
  if (ms_per_sample > 0.0) {
    const double left_ms = p.time_cap_ms - elapsed_ms;
    const double fits = std::floor(left_ms / ms_per_sample);
    if (fits < static_cast<double>(n)) n = static_cast<int>(std::max(fits, 1.0));
  }
  return std::max(n, 1);
}

StopReason run_sampling_loop(const Protocol& p, const TakeBatch& take, std::vector<double>& samples) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  int attempts = 0;  // counts every requested sample, also those that yielded nothing
  int empty_batches_in_a_row = 0;
  for (;;) {
    const double elapsed = elapsed_ms();
    const StopReason r = stop_decision(p, samples, elapsed);
    if (r != StopReason::NotYet) return r;
    const double per_sample = attempts > 0 ? elapsed / attempts : 0.0;
    const int n = next_batch_size(p, static_cast<int>(samples.size()), elapsed, per_sample);
    const std::size_t before = samples.size();
    take(n, samples);
    attempts += n;
    empty_batches_in_a_row = samples.size() == before ? empty_batches_in_a_row + 1 : 0;
    if (empty_batches_in_a_row >= 3) return StopReason::NotYet;
  }
}

}  // namespace gdn::profiler::detail
