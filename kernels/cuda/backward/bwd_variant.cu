// BackwardVariant: the Variant interface over the chunked backward (bwd_run.cuh).
#include <mutex>
#include <sstream>

#include "bwd_run.cuh"
#include "bwd_variant.hpp"
#include "registry/kernel_resources.hpp"
#include "local_grads.cuh"
#include "registry/problem_support.hpp"

namespace gdn::bwd {
namespace {

class BackwardVariant final : public Variant {
 public:
  explicit BackwardVariant(const KernelConfig& c)
      : config_(c), name_(config_name(c)) {}

  const KernelConfig& config() const override { return config_; }
  const std::string& name() const override { return name_; }

  std::string describe() const override {
    std::ostringstream s;
    s << "chunked backward: prepare (gamma, T, e, f), forward recompute of the chunk start "
         "states (column-warp fused loop, 64-column V-blocks"
      << (config_.cp_segment_chunks
              ? ", exact CP in segments of " + std::to_string(config_.cp_segment_chunks) + " chunks"
              : std::string())
      << "), the chain's dS-independent inputs per (chunk, v-head), reverse dS chain per ("
      << (config_.cp_segment_chunks ? "CP segment" : "sequence") << ", v-head, "
      << config_.block_v
      << "-column V-block) with dS in registers (4 warps, mma.sync"
      << (config_.cp_segment_chunks ? "; exact CP: transfer pass, fix-up, main pass" : "")
      << "), local gradients per (chunk, the launch plan's local_heads value heads of one q/k "
         "head) on the tensor cores (8 warps), dq and dk summed over the heads in a fixed order";
    s << describe_resources("reverse chain", resources());
    return s.str();
  }

  Implementable can_implement(const gdn_problem& p) const override {
    const Implementable built = backward_config_built(config_);
    if (!built.ok) return built;
    return check_problem_support(p, "chunked backward");
  }

  size_t workspace_bytes(const gdn_problem& p) const override {
    return bwd_workspace_bytes(p, config_);
  }

  gdn_status run_fwd(const gdn_problem&, const gdn_fwd_args&, gdn_stream_t) const override {
    return GDN_ERROR_INTERNAL;  // a backward-only variant; the registry never offers it for fwd
  }

  gdn_status run_bwd(const gdn_problem& p, const gdn_bwd_args& a, gdn_stream_t s) const override {
    return run_backward(p, a, config_, s);
  }

  Resources resources() const override {
    std::call_once(resources_once_, [this] {
      resources_ = query_kernel_resources(chain_symbol(config_.block_v, true),
                                          chain_smem_bytes(config_.block_v), 128);
    });
    return resources_;
  }

 private:
  KernelConfig config_;
  std::string name_;
  mutable std::once_flag resources_once_;
  mutable Resources resources_;
};

}  // namespace

Implementable backward_config_built(const KernelConfig& c) {
  const ConfigCheck check = check_config(c);
  if (!check.ok) return {false, check.reason};
  if (c.family != Family::Fused) return {false, "family: the chunked backward is fused"};
  bool width = false;
  for (int bv : kChainBlockV) width = width || bv == c.block_v;
  if (!width)
    return {false, "block_v: the chunked backward's reverse chain is compiled for 16 and 32 "
                   "columns, not " + std::to_string(c.block_v)};
  if (c.roles != WarpRoles::Cooperative || c.stages != 2)
    return {false, "roles, stages: the chunked backward runs cooperative warps over a 2-stage "
                   "ring, one chain per CTA"};
  return {true, ""};
}

std::unique_ptr<Variant> make_backward_variant(const KernelConfig& config) {
  return std::make_unique<BackwardVariant>(config);
}

}  // namespace gdn::bwd
