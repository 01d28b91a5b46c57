// FusedVariant: the Variant interface over the fused forward (forward/run.cuh).
#include <cuda_runtime.h>

#include <mutex>
#include <sstream>
#include <string>

#include "forward/kernels.cuh"
#include "forward/run.cuh"
#include "forward/tensor_maps.cuh"
#include "forward/variant.hpp"
#include "registry/kernel_resources.hpp"
#include "registry/problem_support.hpp"

namespace gdn::fused {
namespace {

// Shared memory one CTA may use on sm_90 (227 KB opt-in).
constexpr size_t kMaxSmemPerBlock = 232448;

bool block_v_compiled(int bv, WarpRoles roles) {
  if (roles == WarpRoles::ColumnWarps) {
    for (int v : kCompiledCwBlockV)
      if (v == bv) return true;
    return false;
  }
  for (int v : kCompiledBlockV)
    if (v == bv) return true;
  return false;
}

int loop_threads(const KernelConfig& c) {
  switch (c.roles) {
    case WarpRoles::ProducerConsumer: return kPcThreads;
    case WarpRoles::ColumnWarps: return cw_threads(c.block_v);
    default: return kThreads;
  }
}

size_t loop_smem_bytes(const KernelConfig& c) {
  switch (c.roles) {
    case WarpRoles::ProducerConsumer: return chunk_loop_pc_smem_bytes(c.block_v);
    case WarpRoles::ColumnWarps: return chunk_loop_cw_smem_bytes(c.block_v);
    default: return chunk_loop_smem_bytes(c.block_v, c.stages);
  }
}

// The Output pass's kernel (the one that runs for every problem), bf16 instantiation.
const void* loop_symbol(const KernelConfig& c) {
  switch (c.roles) {
    case WarpRoles::ProducerConsumer:
      return c.block_v == 32 ? chunk_loop_pc_symbol<32>(true)
             : c.block_v == 64 ? chunk_loop_pc_symbol<64>(true) : nullptr;
    case WarpRoles::ColumnWarps:
      return c.block_v == 64 ? chunk_loop_cw_symbol<64>(true)
             : c.block_v == 128 ? chunk_loop_cw_symbol<128>(true) : nullptr;
    default:
      return c.block_v == 32 ? chunk_loop_symbol<32>(true)
             : c.block_v == 64 ? chunk_loop_symbol<64>(true) : nullptr;
  }
}

const char* roles_description(WarpRoles roles) {
  switch (roles) {
    case WarpRoles::ProducerConsumer: return " threads (a chain warpgroup and an output warpgroup)";
    case WarpRoles::ColumnWarps:
      return " threads (a TMA producer warpgroup that gives its registers to the math "
             "warpgroups with setmaxnreg; math warpgroups in which each warp runs the whole chunk step of its 16 value columns, state "
             "transposed in registers; P, T, the exp gates and beta from the prepare kernel)";
    default: return " threads (4 cooperative warps)";
  }
}

class FusedVariant final : public Variant {
 public:
  explicit FusedVariant(const KernelConfig& c) : config_(c), name_(config_name(c)) {}

  Pass pass() const override { return Pass::Forward; }
  const KernelConfig& config() const override { return config_; }
  const std::string& name() const override { return name_; }

  std::string describe() const override {
    std::ostringstream s;
    s << "fused forward: chunk table, prepare (gamma, T) per chunk, then one CTA of "
      << loop_threads(config_) << roles_description(config_.roles) << " per (" << (config_.cp_segment_chunks ? "segment" : "sequence")
      << ", v-head, " << config_.block_v << "-column V-block) looping over chunks, state in "
      << "registers, "
      << (config_.roles == WarpRoles::ColumnWarps
              ? "wgmma bf16/fp16 -> fp32 (A from registers), TMA ring of "
              : "mma.sync bf16/fp16 -> fp32, cp.async ring of ")
      << config_.stages << " stages";
    if (config_.cp_segment_chunks)
      s << "; exact CP: segments of " << config_.cp_segment_chunks
        << " chunks, transfer pass [M | N], fix-up on the tensor cores (3xTF32, fp32-accurate) with the next transfer prefetched, main pass from corrected starts";
    s << describe_resources("chunk loop", resources());
    return s.str();
  }

  Implementable can_implement(const gdn_problem& p) const override {
    const Implementable built = fused_config_built(config_);
    if (!built.ok) return built;
    // The column-warp loop's TMA boxes address tokens by a 32-bit coordinate.
    const int64_t tokens = int64_t{p.B} * p.T;
    if (config_.roles == WarpRoles::ColumnWarps && tokens > kMaxTmaTokens) {
      std::ostringstream s;
      s << "B x T: the column-warp loop addresses tokens by 32-bit TMA coordinates, at most "
        << kMaxTmaTokens << " tokens, got " << tokens;
      return {false, s.str()};
    }
    return check_problem_support(p, "fused");
  }

  size_t workspace_bytes(const gdn_problem& p) const override {
    return fwd_workspace_bytes(p, config_);
  }

  gdn_status run_fwd(const gdn_problem& p, const gdn_fwd_args& a, gdn_stream_t s) const override {
    return run_forward(p, a, config_, s);
  }

  gdn_status run_bwd(const gdn_problem&, const gdn_bwd_args&, gdn_stream_t) const override {
    return GDN_ERROR_INTERNAL;  // a forward-only variant; the registry never offers it for bwd
  }

  Resources resources() const override {
    std::call_once(resources_once_, [this] {
      resources_ = query_kernel_resources(loop_symbol(config_), loop_smem_bytes(config_),
                                          loop_threads(config_));
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

Implementable fused_config_built(const KernelConfig& c) {
  const ConfigCheck check = check_config(c);
  if (!check.ok) return {false, check.reason};
  if (c.family != Family::Fused) return {false, "family: this variant is fused"};
  std::ostringstream s;
  if (!block_v_compiled(c.block_v, c.roles)) {
    s << "block_v: the " << (c.roles == WarpRoles::ColumnWarps ? "column-warp" : "fused")
      << " chunk loop is compiled for "
      << (c.roles == WarpRoles::ColumnWarps ? "64 and 128" : "32 and 64") << " columns, not "
      << c.block_v;
    return {false, s.str()};
  }
  if (c.chains_per_cta != 1)
    return {false, "chains_per_cta: the fused chunk loop runs one chain per CTA"};
  if (c.roles == WarpRoles::ProducerConsumer) {
    if (c.stages != 2)
      return {false, "stages: the producer/consumer chunk loop has a 2-deep ring (its buffers "
                     "alternate by chunk parity)"};
    if (c.consumer_regs != 0)
      return {false, "consumer_regs: the producer/consumer chunk loop does not use setmaxnreg"};
  }
  if (c.roles == WarpRoles::ColumnWarps) {
    if (c.stages != 2)
      return {false, "stages: the column-warp chunk loop has a 2-deep ring (a third stage "
                     "would leave one CTA per SM at 64 columns)"};
    if (c.consumer_regs != 0)
      return {false, "consumer_regs: the column-warp chunk loop's register split is fixed by "
                     "its V-block (the math warpgroups take all the producer warpgroup gives "
                     "back: " + std::to_string(cw_math_regs(c.block_v)) + " registers at " +
                     std::to_string(c.block_v) + " columns); 0 selects it"};
  }
  const size_t smem = loop_smem_bytes(c);
  if (smem > kMaxSmemPerBlock) {
    s << "stages: " << c.stages << " ring stages of a " << c.block_v << "-column V-block need "
      << smem << " B of shared memory, more than the " << kMaxSmemPerBlock << " B a CTA can have";
    return {false, s.str()};
  }
  return {true, ""};
}

std::unique_ptr<Variant> make_fused_variant(const KernelConfig& config) {
  return std::make_unique<FusedVariant>(config);
}

}  // namespace gdn::fused
