// Launchers of the staged kernels (one .cu file each). Every launcher enqueues on the given
// stream only, never synchronises, and returns the launch error.
#pragma once

#include "staged/params.cuh"

namespace gdn::staged {

// Forward: chunk table -> prepare (gamma, T) -> state recurrence (states, V_new, ht) ->
// output (o). The backward runs the first three again, then:
// reverse state-gradient recurrence (dstate_end, dvnew, dw, dv, dh0) -> local gradients
// (dq_h, dk_h, dg, dbeta) -> GVA group sum (dq, dk).
// sms: the device's SM count (device_sm_count()), which sizes the grid; the caller queries it
// once per call and passes it to whatever else needs it.
cudaError_t launch_prepare(const FwdParams& p, int sms, cudaStream_t stream);
// The current device's SM count (132 if the query fails; the failure is cleared).
int device_sm_count();
cudaError_t launch_state_fwd(const FwdParams& p, int block_v, cudaStream_t stream);
cudaError_t launch_output(const FwdParams& p, cudaStream_t stream);
cudaError_t launch_dstate_bwd(const BwdParams& p, int block_v, cudaStream_t stream);
cudaError_t launch_local_bwd(const BwdParams& p, cudaStream_t stream);
cudaError_t launch_group_sum(const BwdParams& p, cudaStream_t stream);

// Kernel entry points, for cudaFuncGetAttributes (resources of a variant).
const void* prepare_kernel_symbol();
const void* state_fwd_kernel_symbol(int block_v);
const void* dstate_bwd_kernel_symbol(int block_v);
// Block size of the state recurrence kernels (forward and backward), their main kernels.
inline constexpr int kStateKernelThreads = 256;
// Dynamic shared memory those kernels launch with.
size_t state_fwd_smem(int block_v);
size_t dstate_bwd_smem(int block_v);

}  // namespace gdn::staged
