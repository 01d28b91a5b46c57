// One step of the sum of dq and dk over the value heads that share a q/k head: eight
// consecutive columns of one (token, q/k head) row, the parts of the group's value heads added
// in head order in fp32 (from fp32 parts, or from 16-bit parts in the input dtype), converted
// to the input dtype. The group-sum launch (bwd_group_sum.cu) and the group sum beside the
// fused backward kernel (backward/group_sum_beside.cu) both run it, so their bits agree.
#pragma once

#include "arch/mma.cuh"
#include "staged/params.cuh"

namespace gdn::staged {

inline constexpr int kGroupSumCols = 8;  // columns per step: 16-byte loads and stores

// kL2Only: the parts are read past L1 (ld.global.cg): written by a grid still running, made
// visible by a GPU-scope release that this CTA acquired.
template <class Elem, bool kL2Only>
__device__ __forceinline__ void add_group_part(const void* part, int64_t i, bool parts16,
                                               float (&acc)[kGroupSumCols]) {
  using Ops = fused::ElemOps<Elem>;
  if (parts16) {
    const auto* at = reinterpret_cast<const uint4*>(static_cast<const Elem*>(part) + i);
    const uint4 u = kL2Only ? __ldcg(at) : *at;
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 x = Ops::unpack(w[j]);
      acc[2 * j] += x.x, acc[2 * j + 1] += x.y;
    }
  } else {
    const auto* at = reinterpret_cast<const float4*>(static_cast<const float*>(part) + i);
    const float4 a = kL2Only ? __ldcg(at) : at[0];
    const float4 b = kL2Only ? __ldcg(at + 1) : at[1];
    acc[0] += a.x, acc[1] += a.y, acc[2] += a.z, acc[3] += a.w;
    acc[4] += b.x, acc[5] += b.y, acc[6] += b.z, acc[7] += b.w;
  }
}

template <class Elem>
__device__ __forceinline__ void store_group_sum8(void* out, int64_t i, const float (&x)[kGroupSumCols]) {
  using Ops = fused::ElemOps<Elem>;
  *reinterpret_cast<uint4*>(static_cast<Elem*>(out) + i) =
      make_uint4(Ops::pack(x[0], x[1]), Ops::pack(x[2], x[3]), Ops::pack(x[4], x[5]), Ops::pack(x[6], x[7]));
}

// Row (t, kh), columns c .. c + 7: dq[t, kh, c..] = sum_{g < group} dq_h[t, kh * group + g, c..]
// and dk alike; parts of [Ttot, Hv, K], outputs of [Ttot, Hk, K].
template <class Elem, bool kL2Only = false>
__device__ __forceinline__ void sum_group_row8(const Dims& d, const void* dq_h, const void* dk_h,
                                               bool parts16, void* dq, void* dk, int64_t t, int kh,
                                               int c) {
  const int64_t src = (t * d.Hv + int64_t(kh) * d.group) * kK + c;
  float sq[kGroupSumCols] = {}, sk[kGroupSumCols] = {};
  for (int g = 0; g < d.group; ++g) {
    add_group_part<Elem, kL2Only>(dq_h, src + int64_t(g) * kK, parts16, sq);
    add_group_part<Elem, kL2Only>(dk_h, src + int64_t(g) * kK, parts16, sk);
  }
  const int64_t dst = (t * d.Hk + kh) * kK + c;
  store_group_sum8<Elem>(dq, dst, sq);
  store_group_sum8<Elem>(dk, dst, sk);
}

}  // namespace gdn::staged
