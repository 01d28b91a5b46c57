// Timing from CUPTI kernel records: each sample's call runs under its own external
// correlation id; after each batch the records are flushed and grouped per sample.
#include <cupti.h>

#include <atomic>
#include <vector>

#include "activity_collector.hpp"
#include "activity_grouping.hpp"
#include "call_runner.hpp"
#include "cupti_backend.hpp"
#include "cupti_common.hpp"
#include "sampling_loop.hpp"

namespace gdn::profiler::detail {
namespace {

// Unique across the process so a late record of an earlier measurement never matches.
std::atomic<std::uint64_t> next_external_id{1};

// Disables the record kinds however the timing ends (also on MeasurementError).
struct ActivityScope {
  ActivityCollector& collector;
  ~ActivityScope() { collector.disable(); }
};

}  // namespace

std::string time_with_cupti_activity(const CallRunner& runner, const L2Flusher& flusher,
                                     const Protocol& p, cudaStream_t stream, int device,
                                     Timing& out) {
  ActivityCollector& collector = ActivityCollector::instance();
  try {
    collector.enable();
  } catch (const std::exception& e) {
    return e.what();
  }
  ActivityScope scope{collector};
  collector.take();  // discard anything recorded before this measurement

  std::vector<double> samples, busy;
  int kernels_per_call = 0, incomplete = 0;
  std::size_t dropped = 0;
  ClockReading clock;
  auto take = [&](int n, std::vector<double>& into) {
    std::vector<std::uint64_t> ids;
    ids.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      flusher.flush(stream);  // outside the tagged region: its work is not part of the sample
      const std::uint64_t id = next_external_id++;
      const bool tagged =
          cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) == CUPTI_SUCCESS;
      runner.run();
      if (tagged) {
        std::uint64_t popped = 0;
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
      }
      ids.push_back(id);  // untagged samples simply come back incomplete
    }
    clock = read_sm_clock(device);  // while the batch is still running
    synchronize(stream, "timing batch (CUPTI)");
    try {
      collector.flush();
    } catch (const std::exception&) {
      // Records that did not arrive make their samples incomplete; counted below.
    }
    CollectedRecords records = collector.take();
    dropped += records.dropped;
    GroupedSamples g = group_kernel_records(records.kernels, records.external_of, ids, kernels_per_call);
    kernels_per_call = g.kernels_per_call;
    incomplete += g.incomplete;
    into.insert(into.end(), g.span_ms.begin(), g.span_ms.end());
    busy.insert(busy.end(), g.busy_ms.begin(), g.busy_ms.end());
  };
  const StopReason reason = run_sampling_loop(p, take, samples);
  if (samples.empty())
    return "no CUPTI kernel records arrived for " + std::to_string(incomplete) +
           " samples (dropped records: " + std::to_string(dropped) + ")";
  out.samples_ms = std::move(samples);
  out.kernel_busy_ms = std::move(busy);
  out.stop_reason = reason;
  out.kernels_per_call = kernels_per_call;
  out.incomplete_samples = incomplete;
  out.dropped_records = dropped;
  out.clock = clock;
  return "";
}

}  // namespace gdn::profiler::detail
