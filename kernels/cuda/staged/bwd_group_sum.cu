// Backward stage 3: dq and dk summed over the Hv / Hk value heads that share a k head, in a
// fixed order (no atomics, so results are bit-identical run to run), in fp32 from fp32 or
// 16-bit parts (BwdParams::parts16), converted to the input dtype:
// dq[t, kh, c] = sum_{g < group} dq_h[t, kh * group + g, c].
// A thread takes eight consecutive columns of one (token, q/k head) row: 16-byte loads (two of
// fp32 parts) and 16-byte stores. Bandwidth-bound only so: with a 2-byte load per thread the
// 16-bit parts' sum took longer than the fp32 parts' 4-byte one.
#include "arch/mma.cuh"
#include "staged/kernels.cuh"

namespace gdn::staged {
namespace {

constexpr int kCols = 8;  // columns per thread

template <class Elem>
__device__ __forceinline__ void add_part(const float* part, int64_t i, bool parts16, float (&acc)[kCols]) {
  using Ops = fused::ElemOps<Elem>;
  if (parts16) {
    const uint4 u = *reinterpret_cast<const uint4*>(reinterpret_cast<const Elem*>(part) + i);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 x = Ops::unpack(w[j]);
      acc[2 * j] += x.x, acc[2 * j + 1] += x.y;
    }
  } else {
    const float4 a = *reinterpret_cast<const float4*>(part + i);
    const float4 b = *reinterpret_cast<const float4*>(part + i + 4);
    acc[0] += a.x, acc[1] += a.y, acc[2] += a.z, acc[3] += a.w;
    acc[4] += b.x, acc[5] += b.y, acc[6] += b.z, acc[7] += b.w;
  }
}

template <class Elem>
__device__ __forceinline__ void store8(void* out, int64_t i, const float (&x)[kCols]) {
  using Ops = fused::ElemOps<Elem>;
  *reinterpret_cast<uint4*>(static_cast<Elem*>(out) + i) =
      make_uint4(Ops::pack(x[0], x[1]), Ops::pack(x[2], x[3]), Ops::pack(x[4], x[5]), Ops::pack(x[6], x[7]));
}

template <class Elem>
__global__ void group_sum_kernel(BwdParams p) {
  const Dims& d = p.f.d;
  const int64_t total = d.Ttot * d.Hk * (kK / kCols);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(e % (kK / kCols)) * kCols;
    const int64_t tk = e / (kK / kCols);  // t * Hk + kh
    const int kh = static_cast<int>(tk % d.Hk);
    const int64_t t = tk / d.Hk;
    const int64_t src = (t * d.Hv + int64_t(kh) * d.group) * kK + c;
    float sq[kCols] = {}, sk[kCols] = {};
    for (int g = 0; g < d.group; ++g) {
      add_part<Elem>(p.dq_h, src + int64_t(g) * kK, p.parts16, sq);
      add_part<Elem>(p.dk_h, src + int64_t(g) * kK, p.parts16, sk);
    }
    store8<Elem>(p.dq, tk * kK + c, sq);
    store8<Elem>(p.dk, tk * kK + c, sk);
  }
}

}  // namespace

cudaError_t launch_group_sum(const BwdParams& p, cudaStream_t stream) {
  const int64_t total = p.f.d.Ttot * p.f.d.Hk * (kK / kCols);
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
