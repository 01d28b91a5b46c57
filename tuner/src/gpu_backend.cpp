// GPU backend of the worker: libgdn's variants of either pass on one device, each run with the
// plan pins its candidate name carries (gdn/launch_plan.hpp). Gate: the variant's pass on the
// family's small representative problem against the float64 token-loop oracle (docs/spec.md
// section 4 bars: the forward's o and final state, the backward's six gradients). Measure:
// can_implement, one checked call, the timing phase, then (precise rung only) the CUPTI
// profiling phase and the optional PM timeline. Every answer carries the launch plan the call
// ran with.
#include <cuda_runtime_api.h>

#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "gate_inputs.hpp"
#include "gdn/text/json.hpp"
#include "gdn/problems/api_problem.hpp"
#include "gdn/profiler/device_info.hpp"
#include "gdn/profiler/nvtx.hpp"
#include "gdn/profiler/pm_sampling.hpp"
#include "gdn/profiler/range_profiler.hpp"
#include "gdn/profiler/timing.hpp"
#include "gdn/reference.hpp"
#include "gdn/tuner/backend.hpp"
#include "gdn/tuner/fidelity.hpp"
#include "gdn/tuner/gate_problem.hpp"
#include "gdn/launch_plan.hpp"
#include "gdn/variant.hpp"

namespace gdn::tuner {

namespace {

using profiler::NvtxLevel;
using profiler::NvtxRange;

// Bars of docs/spec.md section 4 (bf16/fp16 inputs): the forward's o and final state; the
// backward's dq, dk, dv, dh0, and its dg, dbeta.
constexpr double kForwardTolerance = 5e-3;
constexpr double kGradientTolerance = 8e-3;
constexpr double kGateGradientTolerance = 2e-2;

class CudaFailure : public std::runtime_error {
 public:
  CudaFailure(const std::string& what, cudaError_t e)
      : std::runtime_error(what + ": " + cudaGetErrorString(e)), code(e) {}
  cudaError_t code;
};
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure(what, e);
}

// One device allocation, freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes) check(cudaMalloc(&ptr, bytes), "cudaMalloc");
  }
  template <class T>
  DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    if (!host.empty()) check(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

gdn_dtype parse_dtype(const std::string& s) {
  if (s == "bf16") return GDN_BF16;
  if (s == "fp16") return GDN_FP16;
  throw std::invalid_argument("problem dtype: expected bf16 or fp16, got '" + s + "'");
}

problems::Problem to_problem(const TrialRequest& r) {
  problems::Problem p;
  p.name = r.problem.shape_set_name + "#" + std::to_string(r.problem.row_index);
  p.h_qk = r.problem.h_qk;
  p.h_v = r.problem.h_v;
  p.k = r.problem.k;
  p.v = r.problem.v;
  p.dtype = parse_dtype(r.problem.dtype);
  p.layout = r.layout == "batched" ? problems::Layout::Batched : problems::Layout::Packed;
  std::stringstream ss(r.problem.seqlens);
  for (std::string item; std::getline(ss, item, ',');) p.seqlens.push_back(std::stoll(item));
  return p;
}

// Device copies of one problem's inputs and outputs. Generating and uploading the inputs of a
// large problem takes seconds, so the measuring path keeps the last problem's copy: the
// strategies order trials problem by problem.
struct DeviceProblem {
  problems::ApiProblem api;
  DeviceBuffer cu, q, k, v, g, beta, h0, o, ht;
  std::size_t o_bytes, ht_bytes;

  DeviceProblem(const problems::Problem& p, const GateInputs& in)
      : api(problems::to_api_problem(p)),
        cu(api.cu_seqlens_bytes()),
        q(in.q), k(in.k), v(in.v), g(in.g), beta(in.beta), h0(in.h0),
        o(in.v.size() * 2),
        ht(in.h0.size() * sizeof(float)),
        o_bytes(in.v.size() * 2),
        ht_bytes(in.h0.size() * sizeof(float)) {
    if (api.cu_seqlens_bytes())
      check(cudaMemcpy(cu.ptr, api.cu_seqlens_host(), api.cu_seqlens_bytes(), cudaMemcpyHostToDevice),
            "upload cu_seqlens");
    api.problem.cu_seqlens = cu.ptr;
  }
};

// A backward call's other inputs (do, dht: the v and h0 of a second seeded draw) and its
// outputs, for one problem.
struct DeviceGrads {
  DeviceBuffer d_o, dht, dq, dk, dv, dg, dbeta, dh0;
  std::size_t qk_bytes, v_bytes, gate_bytes, state_bytes;
  DeviceGrads(const GateInputs& in, const GateInputs& grads)
      : d_o(grads.v), dht(grads.h0),
        dq(in.q.size() * 2), dk(in.k.size() * 2), dv(in.v.size() * 2),
        dg(in.g.size() * sizeof(float)), dbeta(in.beta.size() * sizeof(float)),
        dh0(in.h0.size() * sizeof(float)),
        qk_bytes(in.q.size() * 2), v_bytes(in.v.size() * 2), gate_bytes(in.g.size() * sizeof(float)),
        state_bytes(in.h0.size() * sizeof(float)) {}
  // All-ones bytes are NaN in bf16, fp16 and fp32: an element the kernel does not write shows
  // up as NaN, which never passes.
  void poison() {
    check(cudaMemset(dq.ptr, 0xFF, qk_bytes), "poison dq");
    check(cudaMemset(dk.ptr, 0xFF, qk_bytes), "poison dk");
    check(cudaMemset(dv.ptr, 0xFF, v_bytes), "poison dv");
    check(cudaMemset(dg.ptr, 0xFF, gate_bytes), "poison dg");
    check(cudaMemset(dbeta.ptr, 0xFF, gate_bytes), "poison dbeta");
    check(cudaMemset(dh0.ptr, 0xFF, state_bytes), "poison dh0");
  }
};

// The seed of the second draw a backward problem takes its do and dht from.
constexpr std::uint64_t kGradSeedOffset = 0x9E37ull;

// One candidate's call on a problem: its variant, the pins of its name, the arguments of its
// pass and the variant's workspace.
struct BoundCall {
  const gdn::Variant& variant;
  const gdn_problem& problem;
  gdn_launch_options pins;
  DeviceBuffer workspace;
  gdn_fwd_args fwd{};
  gdn_bwd_args bwd{};
  BoundCall(DeviceProblem& d, DeviceGrads* grads, const gdn::Variant& v, const gdn_launch_options& p)
      : variant(v), problem(d.api.problem), pins(p), workspace(v.workspace_bytes(d.api.problem)) {
    const std::size_t ws = v.workspace_bytes(d.api.problem);
    const auto* g = static_cast<const float*>(d.g.ptr);
    const auto* h0 = static_cast<const float*>(d.h0.ptr);
    fwd = {d.q.ptr, d.k.ptr, d.v.ptr, g, d.beta.ptr, h0, d.o.ptr, static_cast<float*>(d.ht.ptr),
           workspace.ptr, ws, &pins};
    if (grads != nullptr)
      bwd = {d.q.ptr, d.k.ptr, d.v.ptr, g, d.beta.ptr, h0, grads->d_o.ptr,
             static_cast<const float*>(grads->dht.ptr), grads->dq.ptr, grads->dk.ptr, grads->dv.ptr,
             static_cast<float*>(grads->dg.ptr), grads->dbeta.ptr, static_cast<float*>(grads->dh0.ptr),
             workspace.ptr, ws, &pins};
  }
  gdn_status run(cudaStream_t s) const {
    const auto stream = reinterpret_cast<gdn_stream_t>(s);
    return variant.pass() == gdn::Pass::Forward ? variant.run_fwd(problem, fwd, stream)
                                                : variant.run_bwd(problem, bwd, stream);
  }
};

std::vector<double> download_half(const DeviceBuffer& b, std::size_t n, gdn_dtype dt, const char* what) {
  std::vector<std::uint16_t> bits(n);
  check(cudaMemcpy(bits.data(), b.ptr, n * 2, cudaMemcpyDeviceToHost), what);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = from_half_bits(bits[i], dt);
  return out;
}
std::vector<double> download_float(const DeviceBuffer& b, std::size_t n, const char* what) {
  std::vector<float> f(n);
  check(cudaMemcpy(f.data(), b.ptr, n * sizeof(float), cudaMemcpyDeviceToHost), what);
  return {f.begin(), f.end()};
}

// One tensor's error against the reference: {"rel_rms": ..., "max_abs": ...} (null when not finite).
text::Json error_entry(double rel, double max_abs) {
  return {{"rel_rms", text::json_number(rel)}, {"max_abs", text::json_number(max_abs)}};
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    if (std::isnan(d)) return NAN;
    m = std::max(m, d);
  }
  return m;
}

class GpuBackend final : public MeasureBackend {
 public:
  explicit GpuBackend(int gpu) : gpu_(gpu) {
    std::string reason;
    const int n = profiler::cuda_device_count(&reason);
    if (n == 0) throw std::runtime_error("no usable CUDA device: " + reason);
    if (gpu < 0 || gpu >= n)
      throw std::runtime_error("GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(n) + " present)");
    check(cudaSetDevice(gpu), "cudaSetDevice");
    check(cudaFree(nullptr), "creating the CUDA context");
  }

  bool context_lost() const override { return lost_; }

  TrialOutput gate(const TrialRequest& r) override {
    NvtxRange config(NvtxLevel::Config, r.variant);
    NvtxRange phase(NvtxLevel::Phase, "gate");
    return guarded(r, [&](TrialOutput& out, const gdn::Variant& variant, const gdn_launch_options& pins) {
      const auto problem = to_problem(r);
      const problems::ApiProblem api = problems::to_api_problem(problem);
      if (!implementable(out, variant, pins, api.problem)) return;
      const bool forward = variant.pass() == gdn::Pass::Forward;
      const Reference& ref = reference_for(r, problem, forward);
      DeviceProblem dev(problem, ref.inputs);
      std::unique_ptr<DeviceGrads> grads;
      if (!forward) grads = std::make_unique<DeviceGrads>(ref.inputs, ref.grads);
      BoundCall call(dev, grads.get(), variant, pins);
      record_plan(out, call);
      if (forward) {
        check(cudaMemset(dev.o.ptr, 0xFF, dev.o_bytes), "poison o");
        check(cudaMemset(dev.ht.ptr, 0xFF, dev.ht_bytes), "poison ht");
      } else {
        grads->poison();
      }
      if (!launch_checked(out, call)) return;
      if (forward)
        judge(out, {{"o", download_half(dev.o, ref.inputs.v.size(), problem.dtype, "download o"), &ref.out.o, kForwardTolerance},
                    {"ht", download_float(dev.ht, ref.inputs.h0.size(), "download ht"), &ref.out.ht, kForwardTolerance}});
      else
        judge(out, {{"dq", download_half(grads->dq, ref.inputs.q.size(), problem.dtype, "download dq"), &ref.bwd.dq, kGradientTolerance},
                    {"dk", download_half(grads->dk, ref.inputs.k.size(), problem.dtype, "download dk"), &ref.bwd.dk, kGradientTolerance},
                    {"dv", download_half(grads->dv, ref.inputs.v.size(), problem.dtype, "download dv"), &ref.bwd.dv, kGradientTolerance},
                    {"dh0", download_float(grads->dh0, ref.inputs.h0.size(), "download dh0"), &ref.bwd.dh0, kGradientTolerance},
                    {"dg", download_float(grads->dg, ref.inputs.g.size(), "download dg"), &ref.bwd.dg, kGateGradientTolerance},
                    {"dbeta", download_float(grads->dbeta, ref.inputs.beta.size(), "download dbeta"), &ref.bwd.dbeta, kGateGradientTolerance}});
    });
  }

  TrialOutput measure(const TrialRequest& r) override {
    NvtxRange config(NvtxLevel::Config, r.variant);
    return guarded(r, [&](TrialOutput& out, const gdn::Variant& variant, const gdn_launch_options& pins) {
      DeviceProblem& dev = inputs_for(r);
      if (!implementable(out, variant, pins, dev.api.problem)) return;
      DeviceGrads* grads = variant.pass() == gdn::Pass::Backward ? &grads_for(r) : nullptr;
      BoundCall call(dev, grads, variant, pins);
      record_plan(out, call);
      if (!launch_checked(out, call)) return;
      const profiler::LaunchFn launch = [&](cudaStream_t s) { call.run(s); };
      {
        NvtxRange phase(NvtxLevel::Phase, "timing");
        const auto t = profiler::time_kernel(launch, protocol_for_rung(r.rung, r.precise));
        out.samples_ms = t.samples_ms;
        out.result.sample_count = t.count;
        out.result.latency_p20_ms = t.quantiles.p20;
        out.result.latency_p50_ms = t.quantiles.p50;
        out.result.latency_p80_ms = t.quantiles.p80;
        out.result.rel_spread = t.rel_spread;
        if (t.clock.sm_clock_mhz) out.result.clock_mhz = *t.clock.sm_clock_mhz;
        out.result.message = std::string("timing: ") + std::string(profiler::to_string(t.method)) +
                             (t.fallback_reason.empty() ? "" : " (" + t.fallback_reason + ")") +
                             (t.clock.throttled ? "; clock throttled while timing" : "");
      }
      const auto res = variant.resources();
      if (res.registers >= 0) out.result.registers = res.registers;
      if (res.shared_bytes >= 0) out.result.shared_bytes = res.shared_bytes;
      if (res.local_bytes >= 0) out.result.local_bytes = res.local_bytes;
      out.result.outcome = db::Outcome::Passed;
      profile(out, r, launch);
      if (r.pm_sampling && rung_is_precise(r.rung)) pm_timeline(out, launch);
    });
  }

 private:
  struct Reference {
    GateInputs inputs;
    GateInputs grads;     // backward: do (its v) and dht (its h0)
    ref::FwdOutputs out;  // forward
    ref::BwdOutputs bwd;  // backward
  };

  // One output against the oracle: its name, the values read back, the oracle's, its bar.
  struct Checked {
    const char* name;
    std::vector<double> got;
    const std::vector<double>* want;
    double bar;
  };

  // Passed when every output is within its bar (NaN never is); the errors as JSON.
  static void judge(TrialOutput& out, const std::vector<Checked>& outputs) {
    text::Json errors = text::Json::object();
    std::ostringstream msg;
    msg << "relative RMS error";
    bool ok = true;
    double worst = 0;
    for (const Checked& c : outputs) {
      const double e = ref::rel_rms(c.got, *c.want);
      errors[c.name] = error_entry(e, max_abs_diff(c.got, *c.want));
      msg << ' ' << c.name << ' ' << e << " (bar " << c.bar << ')';
      ok = ok && std::isfinite(e) && e <= c.bar;
      worst = std::isnan(e) || std::isnan(worst) ? NAN : std::max(worst, e);
    }
    out.result.errors_json = text::dump_json(errors, -1);
    if (std::isfinite(worst)) out.result.max_rel_rms = worst;
    out.result.outcome = ok ? db::Outcome::Passed : db::Outcome::Incorrect;
    out.result.message = msg.str();
  }

  // can_implement and the pins' check for this problem: Unsupported with the reason if not.
  static bool implementable(TrialOutput& out, const gdn::Variant& variant, const gdn_launch_options& pins,
                            const gdn_problem& p) {
    if (auto impl = variant.can_implement(p); !impl.ok) {
      out.result.outcome = db::Outcome::Unsupported;
      out.result.message = impl.reason;
      return false;
    }
    if (const std::string why = gdn::check_launch_options(pins, p.Hk > 0 ? p.Hv / p.Hk : 0); !why.empty()) {
      out.result.outcome = db::Outcome::Unsupported;
      out.result.message = "plan pins: " + why;
      return false;
    }
    return true;
  }

  // The launch plan the call runs with (the plan function of its pass, on this device).
  void record_plan(TrialOutput& out, const BoundCall& call) {
    const gdn::PlanShape shape = gdn::plan_shape(call.problem);
    const gdn::PlanDevice device{sm_count()};
    out.result.plan = call.variant.pass() == gdn::Pass::Forward
                          ? db::plan_record(gdn::plan_forward(call.variant.config(), shape, device, &call.pins))
                          : db::plan_record(gdn::plan_backward(call.variant.config(), shape, device, &call.pins));
  }

  int sm_count() {
    if (sm_count_ == 0) {
      int sms = 0;
      check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu_), "reading the SM count");
      sm_count_ = sms;
    }
    return sm_count_;
  }

  // The oracle's answer depends on the family and the pass only (fixed seeds): computed once
  // per worker.
  const Reference& reference_for(const TrialRequest& r, const problems::Problem& p, bool forward) {
    const auto key = family_key(r.problem) + " " + r.problem.seqlens + (forward ? " fwd" : " bwd");
    auto it = refs_.find(key);
    if (it != refs_.end()) return it->second;
    Reference ref;
    ref.inputs = make_gate_inputs(p.total_tokens(), p.h_qk, p.h_v, p.k, p.v, p.num_seqs(), p.dtype, 0x6A7Eull, true);
    ref::Shape s;
    s.B = p.batch();
    s.T = p.tokens_per_row();
    if (p.layout == problems::Layout::Packed) s.cu_seqlens = p.cu_seqlens();
    s.Hk = p.h_qk;
    s.Hv = p.h_v;
    s.K = p.k;
    s.V = p.v;
    s.want_final_state = true;
    if (forward) {
      ref.out = ref::oracle_forward(s, ref.inputs.reference);
    } else {
      ref.grads = make_gate_inputs(p.total_tokens(), p.h_qk, p.h_v, p.k, p.v, p.num_seqs(), p.dtype,
                                   0x6A7Eull + kGradSeedOffset, true);
      ref::Grads gr;
      gr.d_o = ref.grads.reference.v;
      gr.dht = ref.grads.reference.h0;
      ref.bwd = ref::oracle_backward(s, ref.inputs.reference, gr, ref::RunOptions{0});
    }
    return refs_.emplace(key, std::move(ref)).first->second;
  }

  DeviceProblem& inputs_for(const TrialRequest& r) {
    const auto key = problem_shape_key(r.problem) + " " + r.layout;
    if (!measured_ || measured_key_ != key) {
      measured_grads_.reset();
      measured_.reset();  // free the previous problem's buffers first
      const auto p = to_problem(r);
      const auto in = make_gate_inputs(p.total_tokens(), p.h_qk, p.h_v, p.k, p.v, p.num_seqs(), p.dtype,
                                       0x5EEDull, false);
      measured_ = std::make_unique<DeviceProblem>(p, in);
      measured_key_ = key;
    }
    return *measured_;
  }

  // The backward's do, dht and gradient buffers of the measured problem (after inputs_for).
  DeviceGrads& grads_for(const TrialRequest& r) {
    if (!measured_grads_) {
      const auto p = to_problem(r);
      const auto in = make_gate_inputs(p.total_tokens(), p.h_qk, p.h_v, p.k, p.v, p.num_seqs(), p.dtype,
                                       0x5EEDull, false);
      const auto grads = make_gate_inputs(p.total_tokens(), p.h_qk, p.h_v, p.k, p.v, p.num_seqs(), p.dtype,
                                          0x5EEDull + kGradSeedOffset, false);
      measured_grads_ = std::make_unique<DeviceGrads>(in, grads);
    }
    return *measured_grads_;
  }

  // Runs once and synchronises: a refused launch is LaunchFailed with libgdn's message.
  bool launch_checked(TrialOutput& out, const BoundCall& call) {
    const gdn_status st = call.run(nullptr);
    if (st != GDN_OK) {
      out.result.outcome = db::Outcome::LaunchFailed;
      out.result.message = std::string(gdn_status_string(st)) + ": " + gdn_last_error();
      return false;
    }
    check(cudaDeviceSynchronize(), "running the variant");
    check(cudaGetLastError(), "running the variant");
    return true;
  }

  void profile(TrialOutput& out, const TrialRequest& r, const profiler::LaunchFn& launch) {
    auto& m = out.result.metrics;
    if (r.metrics == profiler::MetricSet::None) {
      m.unavailable_reason = "not requested (--metrics none)";
      return;
    }
    if (!rung_is_precise(r.rung)) {
      m.unavailable_reason = "cheap rung: counters are read for the final measurement only";
      return;
    }
    NvtxRange phase(NvtxLevel::Phase, "profiling");
    const auto res = profiler::profile_metrics(launch, r.metrics);
    if (!res.available) {
      m.unavailable_reason = res.unavailable_reason;  // e.g. CUPTI busy or no permission: timing only
      return;
    }
    m.sm_busy_pct = res.value("sm_busy_pct");
    m.achieved_occupancy_pct = res.value("achieved_occupancy_pct");
    m.issue_active_pct = res.value("issue_active_pct");
    m.dram_pct = res.value("dram_throughput_pct");
    m.tensor_pipe_pct = res.value("tensor_pipe_pct");
    m.sm_throughput_pct = res.value("sm_throughput_pct");
    m.memory_sol_pct = res.value("memory_throughput_pct");
    m.gpc_clock_hz = res.value("sm_clock_hz");
    for (const auto& v : res.values)
      if (!v.value && !v.unavailable_reason.empty()) {
        m.unavailable_reason += (m.unavailable_reason.empty() ? "" : "; ") + v.key + ": " + v.unavailable_reason;
      }
  }

  void pm_timeline(TrialOutput& out, const profiler::LaunchFn& launch) {
    NvtxRange phase(NvtxLevel::Phase, "pm-sampling");
    const auto tl = profiler::sample_pm_timeline(launch);
    if (!tl.available) {
      out.result.message += "; PM sampling unavailable: " + tl.unavailable_reason;
      return;
    }
    auto column = [&](const char* key) -> int {
      for (std::size_t i = 0; i < tl.metric_keys.size(); ++i)
        if (tl.metric_keys[i] == key) return static_cast<int>(i);
      return -1;
    };
    const int sm = column("sm_busy_pct"), dram = column("dram_throughput_pct"),
              tensor = column("tensor_pipe_pct"), issue = column("issue_active_pct"), hz = column("sm_clock_hz");
    auto at = [](const profiler::PmSample& s, int c) -> std::optional<double> {
      if (c < 0 || static_cast<std::size_t>(c) >= s.values.size() || !std::isfinite(s.values[c])) return std::nullopt;
      return s.values[c];
    };
    for (std::size_t i = 0; i < tl.samples.size(); ++i) {
      const auto& s = tl.samples[i];
      out.pm_timeline.push_back({static_cast<int>(i), static_cast<std::int64_t>(s.t_ns), at(s, sm), at(s, dram),
                                 at(s, tensor), at(s, issue), at(s, hz)});
    }
  }

  template <class Body>
  TrialOutput guarded(const TrialRequest& r, Body&& body) {
    TrialOutput out;
    out.id = r.id;
    // A candidate's name: the variant's, then the plan pins' suffix (gdn::pins_suffix).
    const std::size_t plus = r.variant.find('+');
    const auto* variant = gdn::find_variant(r.variant.substr(0, plus));
    if (!variant) {
      out.result.outcome = db::Outcome::CompileRejected;
      out.result.message = "not compiled into this build";
      return out;
    }
    gdn_launch_options pins = gdn::kRulePins;
    std::string error;
    if (plus != std::string::npos && !gdn::parse_pins_suffix(r.variant.substr(plus), &pins, &error)) {
      out.result.outcome = db::Outcome::CompileRejected;
      out.result.message = "plan pins of '" + r.variant + "': " + error;
      return out;
    }
    if (variant->pass() != r.pass) {
      out.result.outcome = db::Outcome::Unsupported;
      out.result.message = "the request's pass differs from the variant's";
      return out;
    }
    try {
      body(out, *variant, pins);
    } catch (const profiler::MeasurementError& e) {
      fail_cuda(out, e.what(), e.code());
    } catch (const CudaFailure& e) {
      fail_cuda(out, e.what(), e.code);
    }
    return out;
  }

  void fail_cuda(TrialOutput& out, const std::string& what, cudaError_t code) {
    out.result.outcome = db::Outcome::LaunchFailed;
    out.result.message = what;
    out.samples_ms.clear();
    // Errors such as an illegal address are sticky: the context is dead, the worker must go.
    // The kernel crashed (it did not fail to launch): recorded Crashed, like a worker that died.
    if (cudaGetLastError() != cudaSuccess || code == cudaErrorIllegalAddress || code == cudaErrorLaunchFailure ||
        code == cudaErrorIllegalInstruction || code == cudaErrorMisalignedAddress) {
      lost_ = true;
      out.result.outcome = db::Outcome::Crashed;
      out.result.message = what + " (a sticky device error: the worker's CUDA context is lost and it is restarted)";
    }
  }

  int gpu_;
  bool lost_ = false;
  std::map<std::string, Reference> refs_;
  std::unique_ptr<DeviceProblem> measured_;
  std::unique_ptr<DeviceGrads> measured_grads_;  // the backward's, for measured_'s problem
  std::string measured_key_;
  int sm_count_ = 0;
};

}  // namespace

std::unique_ptr<MeasureBackend> make_gpu_backend(int gpu) { return std::make_unique<GpuBackend>(gpu); }

}  // namespace gdn::tuner
