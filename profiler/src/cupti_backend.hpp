// The seam between the CUPTI-free code and the CUPTI code: implemented by src/cupti/*.cpp
// when GDN_WITH_CUPTI is on, by src/without_cupti.cpp ("built without CUPTI") when it is off.
#pragma once

#include <string>

#include "call_runner.hpp"
#include "gdn/profiler/device_info.hpp"
#include "gdn/profiler/timing.hpp"
#include "l2_flusher.hpp"

namespace gdn::profiler::detail {

CuptiSupport query_cupti_support(int ordinal);

// Fills out.samples_ms, kernel_busy_ms, stop_reason, kernels_per_call, dropped_records,
// incomplete_samples and clock from CUPTI kernel records. Returns "" on success, otherwise why
// CUPTI could not be used (then `out` is untouched and the caller falls back to events).
std::string time_with_cupti_activity(const CallRunner& runner, const L2Flusher& flusher,
                                     const Protocol& p, cudaStream_t stream, int device,
                                     Timing& out);

}  // namespace gdn::profiler::detail
