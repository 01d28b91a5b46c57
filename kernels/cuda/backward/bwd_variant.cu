// BackwardVariant: the Variant interface over the chunked backward (bwd_run.cuh).
#include <mutex>
#include <sstream>

#include "bwd_run.cuh"
#include "bwd_variant.hpp"
#include "registry/kernel_resources.hpp"
#include "local_grads.cuh"
#include "registry/problem_support.hpp"
#include "staged/run.cuh"

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
    const bool cp = config_.cp_segment_chunks > 0;
    s << "chunked backward: prepare (gamma, T, e, f), forward recompute of the chunk start "
         "states (column-warp fused loop, 64-column V-blocks"
      << (cp ? ", exact CP in segments of " + std::to_string(config_.cp_segment_chunks) + " chunks"
             : std::string(", exact CP in the launch plan's recompute_cp_chunks segments"))
      << "), ";
    if (config_.roles == WarpRoles::ProducerConsumer) {
      s << "one fused kernel per (" << (cp ? "CP segment" : "sequence")
        << ", v-head) with dS in registers: the reverse chain and every local gradient on chip "
           "(state, chain and local warpgroups, TMA producer warp, wgmma)"
        << (cp ? "; exact CP: the column-warp chain's transfer pass, fix-up" : "")
        << "; dq and dk summed over the group's value heads in a fixed order";
    } else {
      s << "the chain's dS-independent inputs per (chunk, v-head), reverse dS chain per ("
        << (cp ? "CP segment" : "sequence") << ", v-head, " << config_.block_v
        << "-column V-block) with dS in registers ("
        << (config_.roles == WarpRoles::ColumnWarps ? "a wgmma warpgroup, TMA producer warp"
                                                   : "4 warps, mma.sync")
        << (cp ? "; exact CP: transfer pass, fix-up, main pass" : "")
        << "), local gradients per (chunk, the launch plan's local_heads value heads of one q/k "
           "head) on the tensor cores (8 warps), dq and dk summed over the heads in a fixed order";
    }
    s << describe_resources(config_.roles == WarpRoles::ProducerConsumer ? "fused kernel" : "reverse chain",
                            resources());
    return s.str();
  }

  Implementable can_implement(const gdn_problem& p) const override {
    const Implementable built = backward_config_built(config_);
    if (!built.ok) return built;
    const Implementable support = check_problem_support(p, "chunked backward");
    if (!support.ok || config_.roles == WarpRoles::Cooperative) return support;
    // The wgmma chain's TMA loads address the T workspace by a signed 32-bit row, chunk x Hv x
    // 64 (dstate_chain_wg.cuh); the fused kernel's, the recomputed states by chunk x Hv x 128.
    const staged::Dims d = staged::make_dims(p);
    const int rows = config_.roles == WarpRoles::ProducerConsumer ? 128 : 64;
    if (d.max_chunks * int64_t(d.Hv) * rows > int64_t(INT32_MAX))
      return {false, std::string("chunked backward (") +
                         (rows == 128 ? "fused kernel" : "wgmma chain") + "): chunks x h_v x " +
                         std::to_string(rows) + " = " + std::to_string(d.max_chunks * int64_t(d.Hv) * rows) +
                         " exceeds the TMA row range 2^31 - 1; use a cooperative-roles variant"};
    return support;
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
      resources_ = query_kernel_resources(chain_symbol(config_.roles, config_.block_v, true),
                                          chain_smem_bytes(config_.roles, config_.block_v),
                                          chain_threads(config_.roles));
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
  if (c.stages != 2)
    return {false, "stages: the chunked backward's kernels run a 2-stage ring (or, fused, a "
                   "single buffer), not " + std::to_string(c.stages)};
  bool width = false;
  const char* compiled = "";
  switch (c.roles) {
    case WarpRoles::Cooperative:
      for (int bv : kChainBlockV) width = width || bv == c.block_v;
      compiled = "16 and 32 columns with cooperative roles (the mma.sync chain)";
      break;
    case WarpRoles::ColumnWarps:
      for (int bv : kChainWgBlockV) width = width || bv == c.block_v;
      compiled = "64 columns with column-warp roles (the wgmma chain)";
      break;
    case WarpRoles::ProducerConsumer:
      width = c.block_v == kFusedBV;
      compiled = "128 columns with producer-consumer roles (the fused kernel)";
      break;
  }
  if (!width)
    return {false, std::string("block_v: the chunked backward is compiled for ") + compiled +
                       ", not " + std::to_string(c.block_v)};
  return {true, ""};
}

std::unique_ptr<Variant> make_backward_variant(const KernelConfig& config) {
  return std::make_unique<BackwardVariant>(config);
}

}  // namespace gdn::bwd
