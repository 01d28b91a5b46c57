// Backward stage 3: dq and dk summed over the Hv / Hk value heads that share a k head, in a
// fixed order (no atomics, so results are bit-identical run to run), in fp32 from fp32 or
// 16-bit parts (BwdParams::parts16), converted to the input dtype:
// dq[t, kh, c] = sum_{g < group} dq_h[t, kh * group + g, c].
// A thread takes eight consecutive columns of one (token, q/k head) row: 16-byte loads (two of
// fp32 parts) and 16-byte stores. Bandwidth-bound only so: with a 2-byte load per thread the
// 16-bit parts' sum took longer than the fp32 parts' 4-byte one.
#include "staged/group_sum_row.cuh"
#include "staged/kernels.cuh"

namespace gdn::staged {
namespace {

template <class Elem>
__global__ void group_sum_kernel(BwdParams p) {
  const Dims& d = p.f.d;
  constexpr int kSteps = kK / kGroupSumCols;  // per row
  const int64_t total = d.Ttot * d.Hk * kSteps;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(e % kSteps) * kGroupSumCols;
    const int64_t tk = e / kSteps;  // t * Hk + kh
    sum_group_row8<Elem>(d, p.dq_h, p.dk_h, p.parts16, p.dq, p.dk, tk / d.Hk,
                         static_cast<int>(tk % d.Hk), c);
  }
}

}  // namespace

cudaError_t launch_group_sum(const BwdParams& p, cudaStream_t stream) {
  const int64_t total = p.f.d.Ttot * p.f.d.Hk * (kK / kGroupSumCols);
  if (total == 0) return cudaSuccess;
  const int threads = 256;
  const int64_t want = (total + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(want < (1 << 20) ? want : (1 << 20));
  if (p.f.d.in_bf16)
    group_sum_kernel<__nv_bfloat16><<<blocks, threads, 0, stream>>>(p);
  else
    group_sum_kernel<__half><<<blocks, threads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn::staged
