// gdn_fused_bench: forward (or, with GDN_BENCH_PASS=bwd, backward) time of every variant of
// the pass on a grid of anchor shapes. Per (layout, heads) one set of device inputs (values of the anchor kind: q, k of
// about unit norm, v in [-1, 1], g = small negative log-decays with a quarter of the heads at
// 0, beta in (0, 1)); each variant runs once to warm up, is captured into a CUDA graph and
// replayed `replays` times with events around each replay; the median is printed (ms).
// The backward's upstream gradients d_o (like v) and dht (like h0) come from the same generator.
// Usage: gdn_fused_bench [replays=20] [name-filter-substring ...]
// GDN_BENCH_SHAPES="SEQSxLEN:HK/HV,..." (for example "1x32768:32/32,8192x4:16/64") replaces
// the default grid of layouts and heads. GDN_BENCH_TIMELINE=1 also prints, per variant and
// shape, every kernel's GPU start and duration in one replay (CUPTI activity records), after
// the timing row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_harness.hpp"
#ifdef GDN_BENCH_TIMELINE_AVAILABLE
#include "kernel_timeline.hpp"
#endif
#include "gdn/testing/half.hpp"

namespace gdn::testing::gpu {
namespace {

struct Layout {
  std::string name;
  int64_t seqs, len;
};
// Named SEQSxLEN, as GDN_BENCH_SHAPES reads them (the anchor table's names put the length
// first for batches: its 8192x4 is 4x8192 here).
const Layout kLayouts[] = {{"1x32768", 1, 32768}, {"1x8192", 1, 8192},
                           {"4x8192", 4, 8192}, {"8x1024", 8, 1024}};
constexpr int kHeads[][2] = {{2, 8}, {4, 16}, {8, 32}, {16, 64}};

// Deterministic xorshift uniform in [-1, 1).
struct Rng {
  uint64_t s;
  float next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<float>((s >> 40) * (2.0 / 16777216.0) - 1.0);
  }
};

std::vector<uint16_t> half_buffer(int64_t n, float amplitude, Rng& rng) {
  std::vector<uint16_t> out(static_cast<size_t>(n));
  for (auto& x : out) x = float_to_half(amplitude * rng.next(), HalfType::BF16);
  return out;
}

struct Inputs {
  gdn_problem problem{};
  DeviceBuffer q, k, v, g, beta, h0, o, ht, cu;
  // The backward's: upstream gradients and outputs.
  DeviceBuffer d_o, dht, dq, dk, dv, dg, dbeta, dh0;
};

Inputs make_inputs(const Layout& l, int hk, int hv) {
  Inputs in;
  const int64_t tokens = l.seqs * l.len;
  Rng rng{0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(tokens * 131 + hv)};
  const float qk_amp = std::sqrt(3.0f / 128.0f);  // uniform: E|x|^2 = 1 over 128 dims
  in.q = DeviceBuffer::from(half_buffer(tokens * hk * 128, qk_amp, rng));
  in.k = DeviceBuffer::from(half_buffer(tokens * hk * 128, qk_amp, rng));
  in.v = DeviceBuffer::from(half_buffer(tokens * hv * 128, 1.0f, rng));
  std::vector<float> g(static_cast<size_t>(tokens * hv)), beta(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const bool no_decay = (i % hv) % 4 == 0;
    g[i] = no_decay ? 0.f : -std::log1p(std::exp(2.0f * rng.next())) / 16.0f;
    beta[i] = 0.5f + 0.45f * rng.next();
  }
  in.g = DeviceBuffer::from(g);
  in.beta = DeviceBuffer::from(beta);
  std::vector<float> h0(static_cast<size_t>(l.seqs * hv * 128 * 128));
  for (auto& x : h0) x = rng.next();
  in.h0 = DeviceBuffer::from(h0);
  in.o = DeviceBuffer(static_cast<size_t>(tokens * hv * 128 * 2));
  in.ht = DeviceBuffer(h0.size() * 4);
  std::vector<int32_t> cu(static_cast<size_t>(l.seqs + 1));
  for (int64_t n = 0; n <= l.seqs; ++n) cu[static_cast<size_t>(n)] = static_cast<int32_t>(n * l.len);
  in.cu = DeviceBuffer::from(cu);
  gdn_problem_init(&in.problem, 1, tokens, hk, hv, 128, 128);
  in.problem.cu_seqlens = in.cu.get();
  in.problem.cu_seqlens_dtype = GDN_INT32;
  in.problem.num_seqs = l.seqs;
  in.problem.max_seqlen_hint = l.len;
  in.d_o = DeviceBuffer::from(half_buffer(tokens * hv * 128, 1.0f, rng));
  std::vector<float> dht(h0.size());
  for (auto& x : dht) x = rng.next();
  in.dht = DeviceBuffer::from(dht);
  in.dq = DeviceBuffer(static_cast<size_t>(tokens * hk * 128 * 2));
  in.dk = DeviceBuffer(static_cast<size_t>(tokens * hk * 128 * 2));
  in.dv = DeviceBuffer(static_cast<size_t>(tokens * hv * 128 * 2));
  in.dg = DeviceBuffer(g.size() * 4);
  in.dbeta = DeviceBuffer(g.size() * 4);
  in.dh0 = DeviceBuffer(h0.size() * 4);
  return in;
}

// The fields both passes' arguments share: the inputs and the workspace.
template <class Args>
Args with_inputs(const Inputs& in, const DeviceBuffer& ws) {
  Args a{};
  a.q = in.q.get();
  a.k = in.k.get();
  a.v = in.v.get();
  a.g = static_cast<const float*>(in.g.get());
  a.beta = in.beta.get();
  a.h0 = static_cast<const float*>(in.h0.get());
  a.workspace = ws.get();
  a.workspace_bytes = ws.bytes();
  return a;
}

// One call of the pass on `s`.
gdn_status call_pass(const Variant& v, Pass pass, const Inputs& in, const DeviceBuffer& ws,
                     cudaStream_t s) {
  const auto stream = reinterpret_cast<gdn_stream_t>(s);
  if (pass == Pass::Forward) {
    auto a = with_inputs<gdn_fwd_args>(in, ws);
    a.o = in.o.get();
    a.ht = static_cast<float*>(in.ht.get());
    return v.run_fwd(in.problem, a, stream);
  }
  auto a = with_inputs<gdn_bwd_args>(in, ws);
  a.d_o = in.d_o.get();
  a.dht = static_cast<const float*>(in.dht.get());
  a.dq = in.dq.get();
  a.dk = in.dk.get();
  a.dv = in.dv.get();
  a.dg = static_cast<float*>(in.dg.get());
  a.dbeta = in.dbeta.get();
  a.dh0 = static_cast<float*>(in.dh0.get());
  return v.run_bwd(in.problem, a, stream);
}

// Median ms of `replays` graph replays of one call of the pass; negative if it cannot run.
// With `timeline`, one more replay's kernel spans are appended to it.
double time_variant(const Variant& v, Pass pass, const Inputs& in, int replays,
                    std::string* timeline) {
  if (!v.can_implement(in.problem).ok) return -1;
  DeviceBuffer ws(v.workspace_bytes(in.problem));
  cudaStream_t s{};
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  if (call_pass(v, pass, in, ws, s) != GDN_OK) return -2;
  check_cuda(cudaStreamSynchronize(s), "warm-up");
  cudaGraph_t graph{};
  cudaGraphExec_t exec{};
  check_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "capture");
  const gdn_status st = call_pass(v, pass, in, ws, s);
  check_cuda(cudaStreamEndCapture(s, &graph), "end capture");
  if (st != GDN_OK) return -3;
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  cudaEvent_t e0{}, e1{};
  check_cuda(cudaEventCreate(&e0), "event");
  check_cuda(cudaEventCreate(&e1), "event");
  std::vector<float> ms;
  check_cuda(cudaGraphLaunch(exec, s), "replay");
  for (int i = 0; i < replays; ++i) {
    check_cuda(cudaEventRecord(e0, s), "record");
    check_cuda(cudaGraphLaunch(exec, s), "replay");
    check_cuda(cudaEventRecord(e1, s), "record");
    check_cuda(cudaEventSynchronize(e1), "sync");
    float t = 0;
    check_cuda(cudaEventElapsedTime(&t, e0, e1), "elapsed");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
#ifdef GDN_BENCH_TIMELINE_AVAILABLE
  if (timeline) *timeline += format_timeline(record_graph_timeline(exec, s, 3));
#endif
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  // The median as bench_peers.py and the sweep's p50 take it: the mean of the middle two of an
  // even count.
  const size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

struct Shape {
  Layout layout;
  int hk, hv;
};

// The default grid: every layout with every head configuration.
std::vector<Shape> default_shapes() {
  std::vector<Shape> out;
  for (const Layout& l : kLayouts)
    for (const auto& hh : kHeads) out.push_back({l, hh[0], hh[1]});
  return out;
}

// "SEQSxLEN:HK/HV" items separated by commas; throws naming the item and the expected form.
std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, end - pos);
    long long seqs = 0, len = 0;
    int hk = 0, hv = 0, used = 0;
    if (std::sscanf(item.c_str(), "%lldx%lld:%d/%d%n", &seqs, &len, &hk, &hv, &used) != 4 ||
        used != static_cast<int>(item.size()) || seqs < 1 || len < 1 || hk < 1 || hv < hk ||
        hv % hk != 0)
      throw std::invalid_argument("GDN_BENCH_SHAPES: item '" + item +
                                  "' is not SEQSxLEN:HK/HV with positive counts and HV a "
                                  "multiple of HK (for example 1x32768:32/32)");
    out.push_back({{item.substr(0, item.find(':')), seqs, len}, hk, hv});
    pos = end + 1;
  }
  return out;
}

bool selected(const Variant& v, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  for (const std::string& f : filters)
    if (v.name().find(f) != std::string::npos) return true;
  return false;
}

int run(int argc, char** argv) {
  const char* env = std::getenv("GDN_BENCH_SHAPES");
  const std::vector<Shape> shapes = env && *env ? parse_shapes(env) : default_shapes();
  if (!hopper_available()) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  const int replays = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::vector<std::string> filters(argv + std::min(argc, 2), argv + argc);
  const char* timeline_env = std::getenv("GDN_BENCH_TIMELINE");
  const bool with_timeline = timeline_env && std::string(timeline_env) == "1";
#ifndef GDN_BENCH_TIMELINE_AVAILABLE
  if (with_timeline)
    throw std::invalid_argument("GDN_BENCH_TIMELINE=1: this build has no CUPTI (GDN_WITH_CUPTI=OFF)");
#endif
  const char* pass_env = std::getenv("GDN_BENCH_PASS");
  const std::string pass_name = pass_env && *pass_env ? pass_env : "fwd";
  if (pass_name != "fwd" && pass_name != "bwd")
    throw std::invalid_argument("GDN_BENCH_PASS: expected fwd or bwd, got '" + pass_name + "'");
  const Pass pass = pass_name == "bwd" ? Pass::Backward : Pass::Forward;
  std::vector<const Variant*> variants;
  for (const Variant* v : variants_of(pass))
    if (selected(*v, filters)) variants.push_back(v);
  std::printf("median of %d CUDA-graph replays, ms\n%-8s %-8s", replays, "layout", "heads");
  for (const Variant* v : variants) std::printf(" | %s", v->name().c_str() + 13);
  std::printf("\n");
  for (const Shape& sh : shapes) {
    const Inputs in = make_inputs(sh.layout, sh.hk, sh.hv);
    char heads[24];
    std::snprintf(heads, sizeof heads, "(%d,%d)", sh.hk, sh.hv);
    std::printf("%-8s %-8s", sh.layout.name.c_str(), heads);
    std::string timelines;
    for (const Variant* v : variants) {
      std::string one;
      std::printf(" | %8.3f", time_variant(*v, pass, in, replays, with_timeline ? &one : nullptr));
      if (!one.empty()) timelines += "  " + v->name() + "\n" + one;
    }
    std::printf("\n%s", timelines.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace gdn::testing::gpu

int main(int argc, char** argv) {
  try {
    return gdn::testing::gpu::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdn_fused_bench: %s\n", e.what());
    return 1;
  }
}
