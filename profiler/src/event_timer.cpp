#include "event_timer.hpp"

#include "sampling_loop.hpp"

namespace gdn::profiler::detail {
namespace {

class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  cudaEvent_t at(std::size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e = nullptr;
      check_cuda(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    return events_[i];
  }

 private:
  std::vector<cudaEvent_t> events_;
};

}  // namespace

void time_with_events(const CallRunner& runner, const L2Flusher& flusher, const Protocol& p,
                      cudaStream_t stream, int device, Timing& out) {
  EventPool events;
  const int replays = p.graph_replays_per_sample;
  auto take = [&](int n, std::vector<double>& samples) {
    for (int i = 0; i < n; ++i) {
      flusher.flush(stream);
      check_cuda(cudaEventRecord(events.at(2 * i), stream), "cudaEventRecord");
      for (int r = 0; r < replays; ++r) runner.run();
      check_cuda(cudaEventRecord(events.at(2 * i + 1), stream), "cudaEventRecord");
    }
    out.clock = read_sm_clock(device);  // read while the batch is still running
    synchronize(stream, "timing batch (events)");
    for (int i = 0; i < n; ++i) {
      float ms = 0.0f;
      check_cuda(cudaEventElapsedTime(&ms, events.at(2 * i), events.at(2 * i + 1)), "cudaEventElapsedTime");
      samples.push_back(static_cast<double>(ms) / replays);
    }
  };
  out.stop_reason = run_sampling_loop(p, take, out.samples_ms);
}

}  // namespace gdn::profiler::detail
