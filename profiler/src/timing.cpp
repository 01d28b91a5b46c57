// The timing phase: validate, prepare (stream, L2 flush buffer, graph), warm up, sample with
// CUPTI kernel records or, failing that, with events; then summarise.
#include <chrono>

#include "call_runner.hpp"
#include "cupti_backend.hpp"
#include "event_timer.hpp"
#include "gdn/profiler/timing.hpp"
#include "l2_flusher.hpp"

namespace gdn::profiler {

std::string_view to_string(TimingMethod m) {
  switch (m) {
    case TimingMethod::CuptiActivity: return "cupti_activity";
    case TimingMethod::GraphReplayEvents: return "graph_replay_events";
    case TimingMethod::StreamEvents: return "stream_events";
  }
  return "unknown";
}

namespace {

void append_reason(std::string& to, const std::string& reason) {
  if (reason.empty()) return;
  if (!to.empty()) to += "; ";
  to += reason;
}

}  // namespace

Timing time_kernel(const LaunchFn& launch, const Protocol& protocol, cudaStream_t stream) {
  const auto t0 = std::chrono::steady_clock::now();
  validate(protocol);
  int device = 0;
  detail::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  int l2_bytes = 0;
  detail::check_cuda(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device),
                     "cudaDeviceGetAttribute(L2CacheSize)");
  validate_for_device(protocol, static_cast<std::size_t>(l2_bytes));

  Timing t;
  t.protocol = protocol;
  t.protocol.l2_flush_bytes = resolved_flush_bytes(protocol, static_cast<std::size_t>(l2_bytes));

  detail::MeasurementStream owned_or_given(stream);
  const cudaStream_t s = owned_or_given.get();
  detail::L2Flusher flusher(t.protocol.l2_flush_bytes);
  detail::CallRunner runner(launch, s, protocol.use_graphs);
  append_reason(t.fallback_reason, runner.graph_fallback_reason());

  for (int i = 0; i < protocol.warmup_calls; ++i) runner.run();
  detail::synchronize(s, "warm-up of the call");

  bool timed = false;
  if (protocol.source == TimingSource::CuptiActivity) {
    const std::string why = detail::time_with_cupti_activity(runner, flusher, t.protocol, s, device, t);
    timed = why.empty();
    if (timed) t.method = TimingMethod::CuptiActivity;
    else append_reason(t.fallback_reason, "CUPTI activity timing unavailable (" + why + "): timed with events");
  }
  if (!timed) {
    t.method = runner.uses_graph() ? TimingMethod::GraphReplayEvents : TimingMethod::StreamEvents;
    detail::time_with_events(runner, flusher, t.protocol, s, device, t);
  }
  detail::synchronize(s, "end of the timing phase");

  t.count = static_cast<int>(t.samples_ms.size());
  if (t.count > 0) {
    t.quantiles = quantiles(t.samples_ms);
    t.rel_spread = relative_spread(t.samples_ms);
  }
  t.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

}  // namespace gdn::profiler
