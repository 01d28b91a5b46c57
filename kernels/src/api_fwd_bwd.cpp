// gdn_fwd and gdn_bwd: validate, check the device, choose a variant, provide its workspace
// (stream-ordered allocation when the caller gave none), launch. Nothing here waits for the
// device, so a call can be captured in a CUDA graph.
#include <cuda_runtime_api.h>

#include "device.hpp"
#include "dispatch.hpp"
#include "status.hpp"
#include "validation.hpp"
#include "workspace.hpp"

namespace gdn::detail {

namespace {

gdn_status launch(const Variant& v, const gdn_problem& p, const gdn_fwd_args& a, gdn_stream_t s) {
  return v.run_fwd(p, a, s);
}
gdn_status launch(const Variant& v, const gdn_problem& p, const gdn_bwd_args& a, gdn_stream_t s) {
  return v.run_bwd(p, a, s);
}

// A training forward (a.save) runs a variant that keeps what the backward reads: the fused
// family's (the staged forward keeps nothing). A backward with a.saved runs any variant: the
// staged one computes everything again.
gdn_status check_saving(const Variant& v, const gdn_fwd_args& a, std::string_view where) {
  return a.save == nullptr ? GDN_OK : require_saving_forward(v, where, "a->save");
}
gdn_status check_saving(const Variant&, const gdn_bwd_args&, std::string_view) { return GDN_OK; }

// Runs the variant with `args.workspace` set; reports launch errors the variant did not.
gdn_status launch_checked(const Variant& v, const gdn_problem& p, const auto& args,
                          gdn_stream_t stream, std::string_view where) {
  const gdn_status status = launch(v, p, args, stream);
  // Non-blocking: returns (and clears) an error of a launch that could not start.
  const cudaError_t launch_error = cudaGetLastError();
  if (launch_error != cudaSuccess && (status == GDN_OK || status == GDN_ERROR_CUDA))
    return cuda_failure(launch_error, where, cat("the launch of variant ", v.name()));
  if (status != GDN_OK)
    return fail(status, cat(where, ": variant ", v.name(), " failed: ", gdn_status_string(status)));
  return GDN_OK;
}

template <typename Args>
gdn_status run_pass(Pass pass, const gdn_problem* p, const Args* a, gdn_stream_t stream,
                    std::string_view where) {
  ProblemFacts facts;
  if (gdn_status s = validate_call(p, a, where, &facts); s != GDN_OK) return s;  // = gdn_validate_*
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  if (facts.num_seqs == 0) return GDN_OK;  // no sequence: no output element exists

  DispatchDecision decision;
  if (gdn_status s = decide_for_call(pass, *p, facts, where, &decision); s != GDN_OK) return s;
  const Variant* variant = decision.variant;
  if (gdn_status s = check_saving(*variant, *a, where); s != GDN_OK) return s;
  const size_t needed = variant->workspace_bytes(*p);
  if (gdn_status s = check_workspace(where, a->workspace, a->workspace_bytes, needed,
                                     variant->name());
      s != GDN_OK)
    return s;
  // The plan pins: the table entry's, then the call's own (a->launch) field by field.
  const gdn_launch_options pins = merge_pins(decision.plan, a->launch);
  Args planned = *a;
  planned.launch = &pins;
  if (a->workspace != nullptr || needed == 0)
    return launch_checked(*variant, *p, planned, stream, where);

  Args with_workspace = planned;
  if (cudaError_t e = cudaMallocAsync(&with_workspace.workspace, needed, stream); e != cudaSuccess)
    return cuda_failure(e, where, cat("cudaMallocAsync of ", needed, " workspace bytes"));
  with_workspace.workspace_bytes = needed;
  const gdn_status status = launch_checked(*variant, *p, with_workspace, stream, where);
  // Freed in stream order: the memory returns to the pool after the kernels that use it.
  if (cudaError_t e = cudaFreeAsync(with_workspace.workspace, stream);
      e != cudaSuccess && status == GDN_OK)
    return cuda_failure(e, where, "cudaFreeAsync of the workspace");
  return status;
}

}  // namespace
}  // namespace gdn::detail

extern "C" gdn_status gdn_fwd(const gdn_problem* p, const gdn_fwd_args* a, gdn_stream_t stream) {
  return gdn::detail::run_pass(gdn::Pass::Forward, p, a, stream, "gdn_fwd");
}

extern "C" gdn_status gdn_bwd(const gdn_problem* p, const gdn_bwd_args* a, gdn_stream_t stream) {
  return gdn::detail::run_pass(gdn::Pass::Backward, p, a, stream, "gdn_bwd");
}
