// Backward stage 3: dq and dk summed over the Hv / Hk value heads that share a k head, in a
// fixed order (no atomics, so results are bit-identical run to run), in fp32 from fp32 or
// 16-bit parts (BwdParams::parts16), converted to the input dtype:
// dq[t, kh, c] = sum_{g < group} dq_h[t, kh * group + g, c].
#include "staged/kernels.cuh"

namespace gdn::staged {
namespace {

__global__ void group_sum_kernel(BwdParams p) {
  const Dims& d = p.f.d;
  const int64_t total = d.Ttot * d.Hk * kK;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(e % kK);
    const int64_t tk = e / kK;  // t * Hk + kh
    const int kh = static_cast<int>(tk % d.Hk);
    const int64_t t = tk / d.Hk;
    const int64_t src = (t * d.Hv + int64_t(kh) * d.group) * kK + c;
    float sq = 0.f, sk = 0.f;
    for (int g = 0; g < d.group; ++g) {
      const int64_t i = src + int64_t(g) * kK;
      sq += p.parts16 ? load_in(p.dq_h, i, d.in_bf16) : p.dq_h[i];
      sk += p.parts16 ? load_in(p.dk_h, i, d.in_bf16) : p.dk_h[i];
    }
    store_in(p.dq, e, sq, d.in_bf16);
    store_in(p.dk, e, sk, d.in_bf16);
  }
}

}  // namespace

cudaError_t launch_group_sum(const BwdParams& p, cudaStream_t stream) {
  const int64_t total = p.f.d.Ttot * p.f.d.Hk * kK;
  if (total == 0) return cudaSuccess;
  const int threads = 256;
  const int64_t want = (total + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(want < (1 << 20) ? want : (1 << 20));
  group_sum_kernel<<<blocks, threads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn::staged
