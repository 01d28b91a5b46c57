// StagedVariant: the Variant interface over the staged launch sequences (staged/run.cuh).
#include <cuda_runtime.h>

#include <mutex>
#include <sstream>

#include "staged/kernels.cuh"
#include "staged/run.cuh"
#include "staged/variant.hpp"
#include "registry/kernel_resources.hpp"
#include "registry/problem_support.hpp"

namespace gdn::staged {
namespace {

class StagedVariant final : public Variant {
 public:
  explicit StagedVariant(const KernelConfig& c)
      : pass_(c.pass), config_(c), name_(config_name(c)) {}

  const KernelConfig& config() const override { return config_; }
  const std::string& name() const override { return name_; }

  std::string describe() const override {
    std::ostringstream s;
    if (pass_ == Pass::Forward)
      s << "staged forward: chunk table, prepare (gamma, T) per chunk, state recurrence per "
           "(sequence, v-head, "
        << config_.block_v << "-column V-block), output per (chunk, v-head, 64 columns); "
           "256 threads, fp32 CUDA-core tiles";
    else
      s << "staged backward: forward recompute, reverse dS recurrence per (sequence, v-head, "
        << config_.block_v << "-column V-block), local gradients per (chunk, v-head), "
           "deterministic GVA sum; 256 threads, fp32 CUDA-core tiles";
    s << describe_resources("main kernel", resources());
    return s.str();
  }

  Implementable can_implement(const gdn_problem& p) const override {
    const ConfigCheck check = check_config(config_);
    if (!check.ok) return {false, check.reason};
    if (config_.family != Family::Staged) return {false, "family: this variant is staged"};
    if (config_.cp_segment_chunks != 0)
      return {false, "cp_segment_chunks: the staged family has no context parallelism (0 only)"};
    if (!block_v_compiled()) {
      std::ostringstream s;
      s << "block_v: the staged " << (pass_ == Pass::Forward ? "forward" : "backward")
        << " has no " << config_.block_v << "-column V-block";
      return {false, s.str()};
    }
    return check_problem_support(p, "staged");
  }

  size_t workspace_bytes(const gdn_problem& p) const override {
    return pass_ == Pass::Forward ? fwd_workspace_bytes(p) : bwd_workspace_bytes(p);
  }

  gdn_status run_fwd(const gdn_problem& p, const gdn_fwd_args& a, gdn_stream_t s) const override {
    if (pass_ != Pass::Forward) return GDN_ERROR_INTERNAL;
    // The staged forward keeps none of what the chunked backward reads (gdn_saved): a training
    // forward runs a fused variant (gdn_saved_init and the dispatcher refuse the staged one).
    if (a.save) return GDN_ERROR_UNSUPPORTED;
    const int sms = device_sm_count();
    return run_forward(p, a, config_.block_v,
                       plan_forward(config_, plan_shape(p), PlanDevice{sms}, a.launch), sms, s);
  }

  gdn_status run_bwd(const gdn_problem& p, const gdn_bwd_args& a, gdn_stream_t s) const override {
    if (pass_ != Pass::Backward) return GDN_ERROR_INTERNAL;
    const int sms = device_sm_count();
    return run_backward(p, a, plan_backward(config_, plan_shape(p), PlanDevice{sms}, a.launch),
                        sms, s);
  }

  Resources resources() const override {
    std::call_once(resources_once_, [this] {
      const bool fwd = pass_ == Pass::Forward;
      resources_ = query_kernel_resources(
          fwd ? state_fwd_kernel_symbol(config_.block_v) : dstate_bwd_kernel_symbol(config_.block_v),
          fwd ? state_fwd_smem(config_.block_v) : dstate_bwd_smem(config_.block_v),
          kStateKernelThreads);
    });
    return resources_;
  }

 private:
  bool block_v_compiled() const {
    if (pass_ == Pass::Forward) {
      for (int v : kForwardBlockV)
        if (v == config_.block_v) return true;
    } else {
      for (int v : kBackwardBlockV)
        if (v == config_.block_v) return true;
    }
    return false;
  }

  Pass pass_;
  KernelConfig config_;
  std::string name_;
  mutable std::once_flag resources_once_;
  mutable Resources resources_;
};

}  // namespace

std::unique_ptr<Variant> make_staged_variant(const KernelConfig& config) {
  return std::make_unique<StagedVariant>(config);
}

}  // namespace gdn::staged
