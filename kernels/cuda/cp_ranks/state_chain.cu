// The chains of context parallelism across ranks (state_chain.hpp). R is small (the number of
// ranks) and each step is a [K, K] x [K, V] product per head, so a plain fp32 FMA loop is
// enough: one CTA per (value head, kColumns state columns), one thread per state row, the
// running block of x in shared memory. fp32 FMAs keep the chain as accurate as the kernels'
// own fp32 state.
#include "cp_ranks/state_chain.hpp"

namespace gdn::cp_ranks {

namespace {

constexpr int kColumns = 8;

__global__ void state_chain_kernel(StateChain c) {
  extern __shared__ float block[];  // [K][kColumns]: x's rows, this CTA's columns
  const int64_t K = c.K, V = c.V;
  const int64_t head = blockIdx.x;
  const int64_t col0 = int64_t{blockIdx.y} * kColumns;
  const int64_t row = threadIdx.x;
  const int64_t state_base = head * K * V;
  const int64_t transition_base = head * K * K;
  // Logical x(row, col) with row in K (the contracted index) and col in V.
  const auto at = [&](int64_t r, int64_t col) { return c.vk_layout ? col * K + r : r * V + col; };
  // The factor of x(ci, .) in row `row` of the step: M(row, ci) forward, M(ci, row) backward,
  // where the stored transition is M in the KV layout and M^T in the VK layout.
  const bool row_major = c.vk_layout == c.transpose;

  float acc[kColumns];
  const int32_t first = c.transpose ? c.count - 1 : 0;
  const float* add = c.adds + first * c.add_stride + state_base;
  for (int j = 0; j < kColumns; ++j) {
    const int64_t col = col0 + j;
    acc[j] = col < V ? add[at(row, col)] : 0.0f;
    block[row * kColumns + j] = acc[j];
  }
  __syncthreads();
  for (int32_t n = 1; n < c.count; ++n) {
    const int32_t i = c.transpose ? c.count - 1 - n : n;
    const float* m = c.transitions + i * c.transition_stride + transition_base;
    add = c.adds + i * c.add_stride + state_base;
    for (int j = 0; j < kColumns; ++j) {
      const int64_t col = col0 + j;
      acc[j] = col < V ? add[at(row, col)] : 0.0f;
    }
    for (int64_t ci = 0; ci < K; ++ci) {
      const float factor = row_major ? m[row * K + ci] : m[ci * K + row];
      for (int j = 0; j < kColumns; ++j) acc[j] = fmaf(factor, block[ci * kColumns + j], acc[j]);
    }
    __syncthreads();  // every row has read the previous x
    for (int j = 0; j < kColumns; ++j) block[row * kColumns + j] = acc[j];
    __syncthreads();
  }
  for (int j = 0; j < kColumns; ++j) {
    const int64_t col = col0 + j;
    if (col < V) c.out[state_base + at(row, col)] = acc[j];
  }
}

__global__ void identity_states_kernel(float* dst, int64_t total, int64_t K) {
  for (int64_t e = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t within = e % (K * K);
    dst[e] = within / K == within % K ? 1.0f : 0.0f;
  }
}

}  // namespace

cudaError_t launch_state_chain(const StateChain& chain, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(chain.Hv),
                  static_cast<unsigned>((chain.V + kColumns - 1) / kColumns));
  const size_t smem = sizeof(float) * static_cast<size_t>(chain.K) * kColumns;
  state_chain_kernel<<<grid, static_cast<unsigned>(chain.K), smem, stream>>>(chain);
  return cudaGetLastError();
}

cudaError_t launch_identity_states(float* dst, int32_t Hv, int32_t K, cudaStream_t stream) {
  const int64_t total = int64_t{Hv} * K * K;
  const int64_t blocks = (total + 255) / 256;
  identity_states_kernel<<<static_cast<unsigned>(blocks < 1024 ? blocks : 1024), 256, 0,
                           stream>>>(dst, total, K);
  return cudaGetLastError();
}

}  // namespace gdn::cp_ranks
