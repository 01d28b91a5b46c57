// Timing phase (unprofiled): warm up, defeat the L2, sample until the stop rule says enough.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdn/profiler/launch.hpp"
#include "gdn/profiler/protocol.hpp"
#include "gdn/profiler/stats.hpp"

namespace gdn::profiler {

// How the samples were actually taken (may differ from Protocol::source after a fallback).
enum class TimingMethod {
  CuptiActivity,      // GPU span of the call's kernels from CUPTI activity records
  GraphReplayEvents,  // CUDA events around graph launches of the call
  StreamEvents,       // CUDA events around direct launches (graph capture failed or disabled)
};
std::string_view to_string(TimingMethod m);

// SM clock read (through NVML, if the driver has it) while the last samples were running.
struct ClockReading {
  std::optional<unsigned> sm_clock_mhz;          // nullopt: NVML unavailable
  std::optional<unsigned long long> event_reasons;  // NVML clock event (throttle) bitmask
  bool throttled = false;  // power cap, thermal or hardware slowdown was active
  std::string unavailable_reason;  // why sm_clock_mhz is empty
};

struct Timing {
  // One latency per sample, milliseconds, in the order taken. With CUPTI a sample is the span
  // from the first kernel's start to the last kernel's end of one call (gaps between the call's
  // kernels count: the caller pays them).
  std::vector<double> samples_ms;
  // CUPTI only: per sample, the sum of the kernels' own durations (span minus gaps).
  std::vector<double> kernel_busy_ms;
  Quantiles quantiles;           // p20 / p50 / p80 of samples_ms
  double rel_spread = 0.0;       // (p80 - p20) / p50
  int count = 0;                 // samples_ms.size()
  StopReason stop_reason = StopReason::NotYet;
  TimingMethod method = TimingMethod::CuptiActivity;
  std::string fallback_reason;   // why `method` is not what the protocol asked for; "" if it is
  int kernels_per_call = 0;      // CUPTI only: kernels one call launched
  std::size_t dropped_records = 0;  // cuptiActivityGetNumDroppedRecords, summed
  int incomplete_samples = 0;    // CUPTI samples discarded for missing kernel records
  ClockReading clock;
  double wall_ms = 0.0;          // host time spent in time_kernel (the runner's overhead budget)
  Protocol protocol;             // as used: l2_flush_bytes resolved to the real buffer size
};

// Times `launch` on the current device under `protocol` (validated first: std::invalid_argument
// on a bad protocol). `stream` = nullptr: a private non-blocking stream is used (the legacy
// default stream cannot be captured into a graph). Throws MeasurementError on a CUDA failure of
// the call itself; CUPTI trouble is not an error (falls back to events, says why).
Timing time_kernel(const LaunchFn& launch, const Protocol& protocol, cudaStream_t stream = nullptr);

// NVML reading of the current device's SM clock; never throws.
ClockReading read_sm_clock(int device_ordinal);

}  // namespace gdn::profiler
