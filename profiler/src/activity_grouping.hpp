// Pure part of CUPTI activity timing: kernel records -> one latency per sample. Each sample's
// call ran under its own external correlation id, so a kernel belongs to sample S when the
// runtime call that launched it (its correlation id) was tagged with S.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace gdn::profiler::detail {

struct KernelRecord {
  std::uint32_t correlation_id;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
};

struct GroupedSamples {
  std::vector<double> span_ms;  // first start to last end, per complete sample, in id order
  std::vector<double> busy_ms;  // sum of kernel durations, parallel to span_ms
  int kernels_per_call = 0;     // the largest kernel count seen for one sample
  int incomplete = 0;           // samples with fewer kernels than kernels_per_call (or none)
};

// sample_ids: the external ids of the batch, in launch order. external_of: correlation id ->
// external id. expected_kernels: kernels per call known from earlier batches (0 if none).
GroupedSamples group_kernel_records(std::span<const KernelRecord> kernels,
                                    const std::unordered_map<std::uint32_t, std::uint64_t>& external_of,
                                    std::span<const std::uint64_t> sample_ids, int expected_kernels);

}  // namespace gdn::profiler::detail
