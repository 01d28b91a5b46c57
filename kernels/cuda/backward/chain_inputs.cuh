// The reverse chain's dS-independent inputs, computed for every (chunk, v-head) in parallel
// (chain_inputs.cu).
#pragma once

#include "bwd_params.cuh"

namespace gdn::bwd {

struct ChainInputsParams {
  Dims d;
  const void* q;
  const void* k;
  const void* d_o;
  const ChunkInfo* table;
  const float* gcum;
  uint16_t* dvin16;  // [Ttot, Hv, V]       scale P^T dO
  uint16_t* xq16;    // [chunk, Hv, K, V]   scale Q^T diag(e) dO
};

cudaError_t launch_chain_inputs(const ChainInputsParams& p, cudaStream_t stream);

}  // namespace gdn::bwd
