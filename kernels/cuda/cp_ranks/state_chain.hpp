// Context parallelism across ranks: the chains of small per-rank carries (gdn_cp.h). Plain C++
// declarations, so the host code of kernels/src can call them.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace gdn::cp_ranks {

// One chain over `count` steps, per value head, in fp32:
//   forward (transpose = false): x = add_0;       x = M_i x + add_i    for i = 1 .. count-1
//   backward (transpose = true): x = add_{n-1};   x = M_i^T x + add_i  for i = n-2 .. 0
// M_i is the [K, K] transition of step i as the forward stores it (the final state of the
// identity with v = 0, in the state layout); x and add_i are [K, V] states in that layout.
struct StateChain {
  const float* transitions = nullptr;  // step i's transitions at transitions + i * transition_stride
  int64_t transition_stride = 0;       // floats; each holds [Hv, K, K]
  const float* adds = nullptr;         // step i's states at adds + i * add_stride
  int64_t add_stride = 0;              // floats; each holds [Hv, K, V]
  int32_t count = 0;                   // >= 1
  bool transpose = false;              // the backward chain (and its reverse order)
  bool vk_layout = false;              // states stored [Hv, V, K] (GDN_STATE_VK)
  int32_t Hv = 0, K = 0, V = 0;        // K <= 1024 (one thread per state row)
  float* out = nullptr;                // [Hv, K, V] (layout as above)
};

cudaError_t launch_state_chain(const StateChain& chain, cudaStream_t stream);

// dst [Hv, K, K] = the identity per head (the start state whose final state is the transition).
cudaError_t launch_identity_states(float* dst, int32_t Hv, int32_t K, cudaStream_t stream);

}  // namespace gdn::cp_ranks
