// Forward stage 3: the output, parallel over chunks. One CTA per (chunk, v-head, 64-column
// V-block), 256 threads:
//   P = (Q K^T) o Gam o causal                 tile 64 x 64, depth 128
//   O = scale (diag(e) Q S + P Vn)             tile 64 x 64, depths 128 and 64
// with S the chunk's start state and Vn = V_new from the state recurrence.
#include "common/block_tile.cuh"
#include "common/chunk_math.cuh"
#include "staged/kernels.cuh"
#include "arch/launch_smem.cuh"

namespace gdn::staged {
namespace {

constexpr int kThreads = 256;
constexpr int kBlockV = 64;

struct OutputSmem {
  SmemMat q, k, s, vn, pm;  // 64 x 128, 64 x 128, 128 x 64, 64 x 64, 64 x 64
  GateVectors* gv;
  __host__ __device__ static OutputSmem carve(SmemCarver& c) {
    OutputSmem m;
    m.q = {c.take(kC * (kK + 1)), kK + 1};
    m.k = {c.take(kC * (kK + 1)), kK + 1};
    m.s = {c.take(kK * (kBlockV + 1)), kBlockV + 1};
    m.vn = {c.take(kC * (kBlockV + 1)), kBlockV + 1};
    m.pm = {c.take(kC * (kC + 1)), kC + 1};
    m.gv = reinterpret_cast<GateVectors*>(c.take(sizeof(GateVectors) / sizeof(float) + 1));
    return m;
  }
};

size_t output_smem_bytes() {
  SmemCarver c{nullptr};
  OutputSmem::carve(c);
  return c.used;
}

__global__ void __launch_bounds__(kThreads) output_kernel(FwdParams p) {
  const int64_t chunk = blockIdx.x;
  const ChunkInfo ci = p.ws.table[chunk];
  if (ci.len == 0) return;
  const Dims& d = p.d;
  const int h = blockIdx.y;
  const int v0 = blockIdx.z * kBlockV;
  extern __shared__ __align__(16) char smem_raw[];
  SmemCarver carver{smem_raw};
  const OutputSmem m = OutputSmem::carve(carver);
  GateVectors& gv = *m.gv;

  load_rows_128(m.q, p.q, ci, d.Hk, k_head(d, h), d.in_bf16);
  load_rows_128(m.k, p.k, ci, d.Hk, k_head(d, h), d.in_bf16);
  const float* s_in = p.ws.states + chunk_state_index(chunk, d.Hv, h);
  block_for(kK * kBlockV, [&](int e) {
    const int kk = e / kBlockV, vv = e % kBlockV;
    m.s(kk, vv) = s_in[kk * kV + v0 + vv];
  });
  load_rows_f32(m.vn, p.ws.vnew, ci, d.Hv, h, v0, kBlockV);
  load_gates(gv, p.ws.gcum, p.beta, ci, h, d);
  __syncthreads();

  // P = (Q K^T) o Gam, causal (diagonal included)   tile 64 x 64, depth 128
  BlockTile<kC, kC, kThreads> pm;
  pm.zero();
  pm.mma(kK, [&](int i, int c) { return m.q(i, c); }, [&](int c, int j) { return m.k(j, c); });
  pm.each([&](int i, int j, float& a) { m.pm(i, j) = a * causal_gate(gv, i, j); });
  __syncthreads();

  // O = scale (diag(e) Q S + P Vn)                  tile 64 x 64
  BlockTile<kC, kBlockV, kThreads> o;
  o.zero();
  o.mma(kK, [&](int i, int c) { return m.q(i, c); }, [&](int c, int j) { return m.s(c, j); });
  o.each([&](int i, int, float& a) { a *= gv.e[i]; });
  o.mma(kC, [&](int i, int c) { return m.pm(i, c); }, [&](int c, int j) { return m.vn(c, j); });
  o.each([&](int i, int j, float& a) {
    if (i < ci.len) store_in(p.o, ((ci.tok_begin + i) * d.Hv + h) * kV + v0 + j, d.scale * a, d.in_bf16);
  });
}

}  // namespace

cudaError_t launch_output(const FwdParams& p, cudaStream_t stream) {
  const size_t smem = output_smem_bytes();
  const cudaError_t err = opt_into_shared_memory(reinterpret_cast<const void*>(output_kernel), smem);
  if (err != cudaSuccess) return err;
  const dim3 grid(static_cast<unsigned>(p.d.max_chunks), p.d.Hv, kV / kBlockV);
  output_kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn::staged
