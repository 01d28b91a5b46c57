#include "kernel_timeline.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "device_harness.hpp"

namespace gdn::testing::gpu {
namespace {

constexpr size_t kBufferBytes = 4u << 20;

std::mutex g_mutex;
std::vector<KernelSpan> g_spans;

void check_cupti(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* msg = nullptr;
  cuptiGetResultString(r, &msg);
  throw std::runtime_error(std::string("CUPTI ") + what + ": " + (msg ? msg : "unknown error"));
}

void CUPTIAPI request_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI complete_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard lock(g_mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    g_spans.push_back({k->name ? k->name : "?", k->start, k->end});
  }
  std::free(buffer);
}

// "void gdn::fused::chunk_loop_cw_kernel<64, ...>(...)" -> "chunk_loop_cw_kernel<64, ...>"
std::string short_name(const std::string& full) {
  std::string s = full.substr(0, full.find('('));
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  const size_t tmpl = s.find('<');
  const size_t scope = s.rfind("::", tmpl == std::string::npos ? std::string::npos : tmpl);
  if (scope != std::string::npos) s = s.substr(scope + 2);
  return s.size() > 60 ? s.substr(0, 60) : s;
}

}  // namespace

std::vector<KernelSpan> record_graph_timeline(cudaGraphExec_t exec, cudaStream_t s, int replays) {
  check_cupti(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer), "register");
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable");
  {
    std::lock_guard lock(g_mutex);
    g_spans.clear();
  }
  // One replay per recorded group, synchronised, so the last group is one replay's kernels.
  size_t before_last = 0;
  for (int i = 0; i < replays; ++i) {
    if (i == replays - 1) {
      check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
      std::lock_guard lock(g_mutex);
      before_last = g_spans.size();
    }
    check_cuda(cudaGraphLaunch(exec, s), "timeline replay");
    check_cuda(cudaStreamSynchronize(s), "timeline sync");
  }
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
  check_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "disable");
  std::lock_guard lock(g_mutex);
  std::vector<KernelSpan> last(g_spans.begin() + static_cast<std::ptrdiff_t>(before_last),
                               g_spans.end());
  std::sort(last.begin(), last.end(),
            [](const KernelSpan& a, const KernelSpan& b) { return a.start_ns < b.start_ns; });
  return last;
}

std::string format_timeline(const std::vector<KernelSpan>& spans) {
  if (spans.empty()) return "  (no kernel records)\n";
  std::string out;
  const uint64_t t0 = spans.front().start_ns;
  uint64_t t1 = t0, prev_end = t0;
  char line[160];
  for (const KernelSpan& k : spans) {
    const double gap = (static_cast<double>(k.start_ns) - static_cast<double>(prev_end)) / 1e3;
    std::snprintf(line, sizeof line, "    start %8.2f us  dur %8.2f us  after prev end %+8.2f us  %s\n",
                  (k.start_ns - t0) / 1e3, (k.end_ns - k.start_ns) / 1e3, gap,
                  short_name(k.name).c_str());
    out += line;
    prev_end = std::max(prev_end, k.end_ns);
    t1 = std::max(t1, k.end_ns);
  }
  std::snprintf(line, sizeof line, "    span %.2f us over %zu kernels\n", (t1 - t0) / 1e3,
                spans.size());
  return out + line;
}

}  // namespace gdn::testing::gpu
