// GPU backend of the worker: libgdn's variants on one device. Gate: the variant's forward on
// the family's small representative problem against the float64 token-loop oracle (docs/spec.md
// section 4 bars). Measure: can_implement, one checked call, the timing phase, then (precise
// rung only) the CUPTI profiling phase and the optional PM timeline.
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
#include "gdn/variant.hpp"

namespace gdn::tuner {

namespace {

using profiler::NvtxLevel;
using profiler::NvtxRange;

// Forward bars of docs/spec.md section 4 (bf16/fp16 inputs): o and final state.
constexpr double kForwardTolerance = 5e-3;

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

// The arguments of one variant's call on a problem, with that variant's workspace.
struct BoundCall {
  DeviceBuffer workspace;
  gdn_fwd_args args{};
  BoundCall(DeviceProblem& d, const gdn::Variant& variant) : workspace(variant.workspace_bytes(d.api.problem)) {
    args = {d.q.ptr, d.k.ptr, d.v.ptr, static_cast<const float*>(d.g.ptr), d.beta.ptr,
            static_cast<const float*>(d.h0.ptr), d.o.ptr, static_cast<float*>(d.ht.ptr),
            workspace.ptr, variant.workspace_bytes(d.api.problem)};
  }
};

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
    return guarded(r, [&](TrialOutput& out, const gdn::Variant& variant) {
      const auto problem = to_problem(r);
      const problems::ApiProblem api = problems::to_api_problem(problem);
      if (auto impl = variant.can_implement(api.problem); !impl.ok) {
        out.result.outcome = db::Outcome::Unsupported;
        out.result.message = impl.reason;
        return;
      }
      const auto& ref = reference_for(r, problem);
      DeviceProblem dev(problem, ref.inputs);
      BoundCall call(dev, variant);
      // Poison outputs (all-ones bytes are NaN in bf16, fp16 and fp32): an element the kernel
      // does not write shows up as NaN, which never passes.
      check(cudaMemset(dev.o.ptr, 0xFF, dev.o_bytes), "poison o");
      check(cudaMemset(dev.ht.ptr, 0xFF, dev.ht_bytes), "poison ht");
      if (!launch_checked(out, variant, dev, call)) return;
      std::vector<std::uint16_t> o_bits(ref.inputs.v.size());
      std::vector<float> ht(ref.inputs.h0.size());
      check(cudaMemcpy(o_bits.data(), dev.o.ptr, o_bits.size() * 2, cudaMemcpyDeviceToHost), "download o");
      check(cudaMemcpy(ht.data(), dev.ht.ptr, ht.size() * sizeof(float), cudaMemcpyDeviceToHost), "download ht");
      std::vector<double> o(o_bits.size()), htd(ht.begin(), ht.end());
      for (std::size_t i = 0; i < o.size(); ++i) o[i] = from_half_bits(o_bits[i], problem.dtype);
      const double e_o = ref::rel_rms(o, ref.out.o), e_ht = ref::rel_rms(htd, ref.out.ht);
      out.result.errors_json = text::dump_json({{"o", error_entry(e_o, max_abs_diff(o, ref.out.o))},
                                                {"ht", error_entry(e_ht, max_abs_diff(htd, ref.out.ht))}},
                                               -1);
      const double worst = (std::isnan(e_o) || std::isnan(e_ht)) ? NAN : std::max(e_o, e_ht);
      if (std::isfinite(worst)) out.result.max_rel_rms = worst;
      const bool ok = std::isfinite(worst) && worst <= kForwardTolerance;
      out.result.outcome = ok ? db::Outcome::Passed : db::Outcome::Incorrect;
      std::ostringstream msg;
      msg << "relative RMS error o " << e_o << ", final state " << e_ht << " (bar " << kForwardTolerance << ")";
      out.result.message = msg.str();
    });
  }

  TrialOutput measure(const TrialRequest& r) override {
    NvtxRange config(NvtxLevel::Config, r.variant);
    return guarded(r, [&](TrialOutput& out, const gdn::Variant& variant) {
      DeviceProblem& dev = inputs_for(r);
      if (auto impl = variant.can_implement(dev.api.problem); !impl.ok) {
        out.result.outcome = db::Outcome::Unsupported;
        out.result.message = impl.reason;
        return;
      }
      BoundCall call(dev, variant);
      if (!launch_checked(out, variant, dev, call)) return;
      const profiler::LaunchFn launch = [&](cudaStream_t s) {
        variant.run_fwd(dev.api.problem, call.args, reinterpret_cast<gdn_stream_t>(s));
      };
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
    ref::FwdOutputs out;
  };

  // The oracle's answer depends on the family only (fixed seed): computed once per worker.
  const Reference& reference_for(const TrialRequest& r, const problems::Problem& p) {
    const auto key = family_key(r.problem) + " " + r.problem.seqlens;
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
    ref.out = ref::oracle_forward(s, ref.inputs.reference);
    return refs_.emplace(key, std::move(ref)).first->second;
  }

  DeviceProblem& inputs_for(const TrialRequest& r) {
    const auto key = problem_shape_key(r.problem) + " " + r.layout;
    if (!measured_ || measured_key_ != key) {
      measured_.reset();  // free the previous problem's buffers first
      const auto p = to_problem(r);
      const auto in = make_gate_inputs(p.total_tokens(), p.h_qk, p.h_v, p.k, p.v, p.num_seqs(), p.dtype,
                                       0x5EEDull, false);
      measured_ = std::make_unique<DeviceProblem>(p, in);
      measured_key_ = key;
    }
    return *measured_;
  }

  // Runs once and synchronises: a refused launch is LaunchFailed with libgdn's message.
  bool launch_checked(TrialOutput& out, const gdn::Variant& variant, DeviceProblem& dev, BoundCall& call) {
    const gdn_status st = variant.run_fwd(dev.api.problem, call.args, nullptr);
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
    const auto* variant = gdn::find_variant(r.variant);
    if (!variant) {
      out.result.outcome = db::Outcome::CompileRejected;
      out.result.message = "not compiled into this build";
      return out;
    }
    if (variant->pass() != gdn::Pass::Forward) {
      out.result.outcome = db::Outcome::Unsupported;
      out.result.message = "the sweep runner gates and times forward variants; backward variants are "
                           "measured by scripts/bench_peers.py";
      return out;
    }
    try {
      body(out, *variant);
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
  std::string measured_key_;
};

}  // namespace

std::unique_ptr<MeasureBackend> make_gpu_backend(int gpu) { return std::make_unique<GpuBackend>(gpu); }

}  // namespace gdn::tuner
