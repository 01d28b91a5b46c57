// Backward stage 2: per-chunk local gradients, parallel over (chunk, v-head), 256 threads.
// Inputs per chunk: start state S and end-state gradient dS' (K x V), dO, Vn, dVn, dW' and
// V (64 x V), Q, K (64 x 128), T, gamma, beta. V is walked in 32-column blocks j:
//   W'_j = V_j - diag(e) K S_j                          tile 64 x 32, depth 128
//   dQ  += scale diag(e) dO_j S_j^T                     tile 64 x 128, depth 32
//   dK  += diag(f) Vn_j dS'_j^T - diag(e) dW'_j S_j^T   tile 64 x 128, depth 32 (x2)
//   dP  += dO_j Vn_j^T ;  dAg += dVn_j W'_j^T           tiles 64 x 64, depth 32
//   row sums for dgamma: (Q S_j).dO_j, (K S_j).dW'_j, (K dS'_j).Vn_j; and <S, dS'>
// then, once per chunk (64 x 64 tiles, depth 64 or 128):
//   dPm = scale dP o Gam o causal;  dQ += dPm K;  dK += dPm^T Q
//   dT = dAg diag(beta);  dbeta += colsum(dAg o T);  dA = -T^T dT T^T (strictly lower)
//   Z = dA o diag(beta) Gam;  dK += Z K + Z^T K;  dbeta += rowsum(dA o KK^T o Gam)
//   dgamma from every place gamma enters (O, W', the state update, P and A), then
//   dg = reverse chunk-local cumsum of dgamma.
// dq, dk go to per-v-head workspaces; staged/bwd_group_sum.cu reduces them over the GVA group.
#include "common/block_tile.cuh"
#include "common/chunk_math.cuh"
#include "staged/kernels.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = 256;
constexpr int kBlk = 32;  // V columns per loop step

struct LoopMats {
  SmemMat s, ds;                   // 128 x 32
  SmemMat d_o, vn, dw, w, dvn;     // 64 x 32
  __device__ static LoopMats carve(SmemCarver& c) {
    LoopMats m;
    m.s = {c.take(kK * (kBlk + 1)), kBlk + 1};
    m.ds = {c.take(kK * (kBlk + 1)), kBlk + 1};
    m.d_o = {c.take(kC * (kBlk + 1)), kBlk + 1};
    m.vn = {c.take(kC * (kBlk + 1)), kBlk + 1};
    m.dw = {c.take(kC * (kBlk + 1)), kBlk + 1};
    m.w = {c.take(kC * (kBlk + 1)), kBlk + 1};
    m.dvn = {c.take(kC * (kBlk + 1)), kBlk + 1};
    return m;
  }
};

struct PostMats {
  SmemMat m0, m1, m2, m3;  // 64 x 64 each, reusing the loop region
  __device__ static PostMats carve(SmemCarver& c) {
    PostMats m;
    m.m0 = {c.take(kC * (kC + 1)), kC + 1};
    m.m1 = {c.take(kC * (kC + 1)), kC + 1};
    m.m2 = {c.take(kC * (kC + 1)), kC + 1};
    m.m3 = {c.take(kC * (kC + 1)), kC + 1};
    return m;
  }
};

struct ChunkVectors {
  GateVectors gv;
  float rs_qs[kC], rs_ksw[kC], rs_kds[kC], dgam[kC], dbeta[kC];
  float warp_part[kThreads / 32];
  float sdot;
};

constexpr size_t kQkFloats = 2 * kC * (kK + 1);
constexpr size_t kLoopFloats = 2 * kK * (kBlk + 1) + 5 * kC * (kBlk + 1);
constexpr size_t kPostFloats = 4 * kC * (kC + 1);
constexpr size_t kRegionFloats = kLoopFloats > kPostFloats ? kLoopFloats : kPostFloats;
constexpr size_t kSmemBytes =
    (kQkFloats + kRegionFloats) * sizeof(float) + ((sizeof(ChunkVectors) + 15) / 16) * 16;

__global__ void __launch_bounds__(kThreads, 1) local_bwd_kernel(BwdParams p) {
  const FwdParams& f = p.f;
  const Dims& d = f.d;
  const int64_t chunk = blockIdx.x;
  const ChunkInfo ci = f.ws.table[chunk];
  if (ci.len == 0) return;
  const int h = blockIdx.y;
  extern __shared__ __align__(16) char smem_raw[];
  float* base = reinterpret_cast<float*>(smem_raw);
  const SmemMat q{base, kK + 1}, k{base + kC * (kK + 1), kK + 1};
  char* region = smem_raw + kQkFloats * sizeof(float);
  SmemCarver loop_carver{region}, post_carver{region};
  const LoopMats lm = LoopMats::carve(loop_carver);
  ChunkVectors& cv = *reinterpret_cast<ChunkVectors*>(region + kRegionFloats * sizeof(float));
  GateVectors& gv = cv.gv;

  load_rows_128(q, f.q, ci, d.Hk, k_head(d, h), d.in_bf16);
  load_rows_128(k, f.k, ci, d.Hk, k_head(d, h), d.in_bf16);
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    cv.rs_qs[r] = cv.rs_ksw[r] = cv.rs_kds[r] = cv.dgam[r] = cv.dbeta[r] = 0.f;
  }
  load_gates(gv, f.ws.gcum, f.beta, ci, h, d);

  BlockTile<kC, kK, kThreads> dq, dk;
  BlockTile<kC, kC, kThreads> dp, dag;
  dq.zero();
  dk.zero();
  dp.zero();
  dag.zero();
  float sdot = 0.f;
  const float* s_in = f.ws.states + chunk_state_index(chunk, d.Hv, h);
  const float* ds_in = p.dstate_end + chunk_state_index(chunk, d.Hv, h);
  const bool row_owner = dp.tx() == 0;

  for (int j0 = 0; j0 < kV; j0 += kBlk) {
    __syncthreads();
    block_for(kK * kBlk, [&](int e) {
      const int kk = e / kBlk, c = e % kBlk;
      const float s = s_in[kk * kV + j0 + c], ds = ds_in[kk * kV + j0 + c];
      lm.s(kk, c) = s;
      lm.ds(kk, c) = ds;
      sdot = fmaf(s, ds, sdot);
    });
    block_for(kC * kBlk, [&](int e) {
      const int r = e / kBlk, c = e % kBlk;
      float vd_o = 0.f, vvn = 0.f, vdw = 0.f, vv = 0.f, vdvn = 0.f;
      if (r < ci.len) {
        const int64_t idx = ((ci.tok_begin + r) * d.Hv + h) * kV + j0 + c;
        vd_o = load_in(p.d_o, idx, d.in_bf16);
        vvn = f.ws.vnew[idx];
        vdw = p.dw[idx];
        vv = load_in(f.v, idx, d.in_bf16);
        vdvn = p.dvnew[idx];
      }
      lm.d_o(r, c) = vd_o;
      lm.vn(r, c) = vvn;
      lm.dw(r, c) = vdw;
      lm.w(r, c) = vv;
      lm.dvn(r, c) = vdvn;
    });
    __syncthreads();

    float sums[BlockTile<kC, kBlk, kThreads>::RM];
    // K S_j: rebuilds W'_j in place and gives (K S_j).dW'_j      tile 64 x 32, depth 128
    BlockTile<kC, kBlk, kThreads> ks;
    ks.zero();
    ks.mma(kK, [&](int i, int c) { return k(i, c); }, [&](int c, int j) { return lm.s(c, j); });
    ks.row_sums([&](int i, int j, float a) { return a * lm.dw(i, j); }, sums);
    if (row_owner)
      for (int r = 0; r < ks.RM; ++r) cv.rs_ksw[ks.row(r)] += sums[r];
    ks.each([&](int i, int j, float& a) { lm.w(i, j) -= gv.e[i] * a; });
    // (Q S_j).dO_j                                                tile 64 x 32, depth 128
    BlockTile<kC, kBlk, kThreads> qs;
    qs.zero();
    qs.mma(kK, [&](int i, int c) { return q(i, c); }, [&](int c, int j) { return lm.s(c, j); });
    qs.row_sums([&](int i, int j, float a) { return a * lm.d_o(i, j); }, sums);
    if (row_owner)
      for (int r = 0; r < qs.RM; ++r) cv.rs_qs[qs.row(r)] += sums[r];
    // (K dS'_j).Vn_j                                              tile 64 x 32, depth 128
    BlockTile<kC, kBlk, kThreads> kds;
    kds.zero();
    kds.mma(kK, [&](int i, int c) { return k(i, c); }, [&](int c, int j) { return lm.ds(c, j); });
    kds.row_sums([&](int i, int j, float a) { return a * lm.vn(i, j); }, sums);
    if (row_owner)
      for (int r = 0; r < kds.RM; ++r) cv.rs_kds[kds.row(r)] += sums[r];
    __syncthreads();  // W'_j complete

    dq.mma(kBlk, [&](int i, int c) { return lm.d_o(i, c) * gv.e[i] * d.scale; },
           [&](int c, int j) { return lm.s(j, c); });
    dk.mma(kBlk, [&](int i, int c) { return lm.vn(i, c) * gv.f[i]; },
           [&](int c, int j) { return lm.ds(j, c); });
    dk.mma(kBlk, [&](int i, int c) { return -lm.dw(i, c) * gv.e[i]; },
           [&](int c, int j) { return lm.s(j, c); });
    dp.mma(kBlk, [&](int i, int c) { return lm.d_o(i, c); }, [&](int c, int j) { return lm.vn(j, c); });
    dag.mma(kBlk, [&](int i, int c) { return lm.dvn(i, c); }, [&](int c, int j) { return lm.w(j, c); });
  }

  // <S, dS'> over the block, in a fixed order (deterministic).
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sdot += __shfl_xor_sync(0xffffffffu, sdot, off);
  if (threadIdx.x % 32 == 0) cv.warp_part[threadIdx.x / 32] = sdot;
  __syncthreads();  // loop region free, warp partials visible
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) s += cv.warp_part[w];
    cv.sdot = s;
  }
  const PostMats pm = PostMats::carve(post_carver);

  dp.each([&](int i, int j, float& a) { pm.m0(i, j) = d.scale * a * causal_gate(gv, i, j); });
  dag.each([&](int i, int j, float& a) { pm.m1(i, j) = a; });
  const float* t_in = f.ws.tmat + (chunk * d.Hv + h) * (kC * kC);
  block_for(kC * kC, [&](int e) { pm.m2(e / kC, e % kC) = t_in[e]; });
  __syncthreads();

  // dPm o (Q K^T) for the gate gradient of P; dQ += dPm K; dK += dPm^T Q
  {
    BlockTile<kC, kC, kThreads> qk;
    qk.zero();
    qk.mma(kK, [&](int i, int c) { return q(i, c); }, [&](int c, int j) { return k(j, c); });
    qk.each([&](int i, int j, float& a) { pm.m3(i, j) = pm.m0(i, j) * a; });
  }
  dq.mma(kC, [&](int i, int s) { return pm.m0(i, s); }, [&](int s, int c) { return k(s, c); });
  dk.mma(kC, [&](int i, int s) { return pm.m0(s, i); }, [&](int s, int c) { return q(s, c); });
  __syncthreads();
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    float g = 0.f, b = 0.f;
    for (int j = 0; j < kC; ++j) g += pm.m3(r, j) - pm.m3(j, r);
    for (int i = 0; i < kC; ++i) b = fmaf(pm.m1(i, r), pm.m2(i, r), b);
    cv.dgam[r] += g;
    cv.dbeta[r] += b;
  }
  __syncthreads();
  block_for(kC * kC, [&](int e) { pm.m1(e / kC, e % kC) *= gv.beta[e % kC]; });  // dT
  __syncthreads();
  {
    // X = T^T dT                                     tile 64 x 64, depth 64
    BlockTile<kC, kC, kThreads> x;
    x.zero();
    x.mma(kC, [&](int i, int c) { return pm.m2(c, i); }, [&](int c, int j) { return pm.m1(c, j); });
    x.each([&](int i, int j, float& a) { pm.m3(i, j) = a; });
  }
  __syncthreads();
  {
    // dA = -X T^T (strictly lower part), with KK^T for A = diag(beta) (K K^T o Gam)
    BlockTile<kC, kC, kThreads> da, kk;
    da.zero();
    kk.zero();
    da.mma(kC, [&](int i, int c) { return pm.m3(i, c); }, [&](int c, int j) { return pm.m2(j, c); });
    kk.mma(kK, [&](int i, int c) { return k(i, c); }, [&](int c, int j) { return k(j, c); });
    float rows[BlockTile<kC, kC, kThreads>::RM];
#pragma unroll
    for (int r = 0; r < da.RM; ++r) {
      float rb = 0.f;
#pragma unroll
      for (int c = 0; c < da.RN; ++c) {
        const int i = da.row(r), j = da.col(c);
        float z = 0.f, hz = 0.f;
        if (i > j) {
          const float grad_a = -da.acc[r][c];
          const float gam = causal_gate(gv, i, j);
          const float kkg = kk.acc[r][c] * gam;
          rb = fmaf(grad_a, kkg, rb);
          z = grad_a * gv.beta[i] * gam;
          hz = grad_a * gv.beta[i] * kkg;
        }
        pm.m0(i, j) = z;
        pm.m1(i, j) = hz;
      }
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) rb += __shfl_xor_sync(0xffffffffu, rb, off);
      rows[r] = rb;
    }
    if (row_owner)
      for (int r = 0; r < da.RM; ++r) cv.dbeta[da.row(r)] += rows[r];
  }
  __syncthreads();
  dk.mma(kC, [&](int i, int s) { return pm.m0(i, s); }, [&](int s, int c) { return k(s, c); });
  dk.mma(kC, [&](int i, int s) { return pm.m0(s, i); }, [&](int s, int c) { return k(s, c); });
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    float g = 0.f;
    for (int j = 0; j < kC; ++j) g += pm.m1(r, j) - pm.m1(j, r);
    g += d.scale * gv.e[r] * cv.rs_qs[r] - gv.e[r] * cv.rs_ksw[r];
    cv.dgam[r] += g;
  }
  __syncthreads();
  // gamma_last also scales the carried state: e_last <S, dS'>.
  if (threadIdx.x == 0) cv.dgam[kC - 1] += gv.e_last * cv.sdot;
  // The f terms: gamma_r enters f_r = exp(gamma_last - gamma_r) with dgamma_r -= f_r c_r and
  // dgamma_last += sum_r f_r c_r (c_r = (K dS')_r . Vn_r), whose reverse cumsum at s is
  // sum_{r < s} f_r c_r. That exclusive prefix sum is added directly: summed the other way,
  // the O(1) terms cancel only up to rounding and swamp the e-scaled terms of a strongly
  // decaying head (dg of a short sequence then came out as 0 or noise). rs_qs is free now.
  if (threadIdx.x < kC) {
    const int r = threadIdx.x;
    cv.rs_qs[r] = r > 0 ? gv.f[r - 1] * cv.rs_kds[r - 1] : 0.f;
  }
  __syncthreads();
  chunk_reverse_cumsum_warp0(cv.dgam, cv.dgam);
  chunk_cumsum_warp0(cv.rs_qs, cv.rs_qs);
  __syncthreads();
  if (threadIdx.x < ci.len) {
    const int r = threadIdx.x;
    const int64_t gi = (ci.tok_begin + r) * d.Hv + h;
    p.dg[gi] = cv.dgam[r] + cv.rs_qs[r];
    store_beta(p.dbeta, gi, cv.dbeta[r], d);
  }
  dq.each([&](int i, int c, float& a) {
    if (i < ci.len) p.dq_h[((ci.tok_begin + i) * d.Hv + h) * kK + c] = a;
  });
  dk.each([&](int i, int c, float& a) {
    if (i < ci.len) p.dk_h[((ci.tok_begin + i) * d.Hv + h) * kK + c] = a;
  });
}

}  // namespace

cudaError_t launch_local_bwd(const BwdParams& p, cudaStream_t stream) {
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(local_bwd_kernel), kSmemBytes);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.f.d.max_chunks), p.f.d.Hv);
  local_bwd_kernel<<<grid, kThreads, kSmemBytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn::staged
