#include "activity_grouping.hpp"

#include <algorithm>
#include <limits>

namespace gdn::profiler::detail {

GroupedSamples group_kernel_records(std::span<const KernelRecord> kernels,
                                    const std::unordered_map<std::uint32_t, std::uint64_t>& external_of,
                                    std::span<const std::uint64_t> sample_ids, int expected_kernels) {
  struct Acc {
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t last = 0;
    std::uint64_t busy = 0;
    int count = 0;
  };
  std::unordered_map<std::uint64_t, Acc> by_sample;
  for (std::uint64_t id : sample_ids) by_sample.emplace(id, Acc{});
  for (const KernelRecord& k : kernels) {
    auto ext = external_of.find(k.correlation_id);
    if (ext == external_of.end()) continue;  // e.g. a kernel outside any sample
    auto acc = by_sample.find(ext->second);
    if (acc == by_sample.end()) continue;    // a sample of another batch
    Acc& a = acc->second;
    a.first = std::min(a.first, k.start_ns);
    a.last = std::max(a.last, k.end_ns);
    a.busy += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    ++a.count;
  }
  GroupedSamples out;
  out.kernels_per_call = expected_kernels;
  for (const auto& [id, a] : by_sample) out.kernels_per_call = std::max(out.kernels_per_call, a.count);
  for (std::uint64_t id : sample_ids) {
    const Acc& a = by_sample.at(id);
    // A sample missing a record (dropped buffer) would read short: discard it, count it.
    if (a.count == 0 || a.count < out.kernels_per_call) {
      ++out.incomplete;
      continue;
    }
    out.span_ms.push_back(static_cast<double>(a.last - a.first) * 1e-6);
    out.busy_ms.push_back(static_cast<double>(a.busy) * 1e-6);
  }
  return out;
}

}  // namespace gdn::profiler::detail
