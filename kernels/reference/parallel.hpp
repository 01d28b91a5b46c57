// The reference's only parallelism: independent (sequence, k-head) groups spread over threads.
// Each group is processed whole by one thread in the serial order, so results never depend on
// the thread count; groups write disjoint parts of the outputs.
#pragma once

#include <cstdint>
#include <functional>

#include "gdn/reference.hpp"

namespace gdn::ref::detail {

// Calls work(n, kh) for every sequence n and k-head kh, on run.threads threads.
// Rethrows the first exception a group threw.
void for_each_group(const Shape& s, const RunOptions& run,
                    const std::function<void(int64_t n, int kh)>& work);

}  // namespace gdn::ref::detail
