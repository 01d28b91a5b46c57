// The fp32 repair of a sequence's short last chunk (see short_chunk.cuh and
// short_chunk_math.hpp): 256 threads per value head. S and dS' are
// staged once in shared memory as fp32 (every load of the head in flight at once), so that the
// math reads them there at shared-memory latency.
#include "short_chunk.cuh"

#include "arch/launch_smem.cuh"
#include "arch/mma.cuh"
#include "short_chunk_math.hpp"

namespace gdn::bwd {
namespace {

namespace sc = short_chunk;
constexpr int kThreads = sc::kTiles;  // one tile of each L x 128 x 128 product per thread
constexpr int kWarps = kThreads / 32;
static_assert(sc::kRows == kShortChunkRows - 1, "a short chunk has fewer than kShortChunkRows rows");

// The math's executor on one CTA: loops spread over the threads, each step ended by a barrier.
struct BlockExec {
  float (*totals)[kWarps];  // two buffers of warp totals for sum(), used in turn
  int turn = 0;
  template <class F>
  __device__ void each_nowait(int n, F f) {
    for (int i = threadIdx.x; i < n; i += kThreads) f(i);
  }
  template <class F>
  __device__ void each(int n, F f) {
    each_nowait(n, f);
    __syncthreads();
  }
  // Fixed order: thread t sums i = t, t + 256, ... in turn; a warp adds its 32 partials in a
  // butterfly (every lane ends with the same bits: each level adds the same two values); every
  // thread then adds the 8 warp totals in order. Two buffers used in turn: a thread writes a
  // buffer again only after the next sum's barrier, which every thread passes after its reads.
  template <class F>
  __device__ float sum(int n, F f) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < n; i += kThreads) acc += f(i);
    for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    float* t = totals[turn];
    turn ^= 1;
    if (threadIdx.x % 32 == 0) t[threadIdx.x / 32] = acc;
    __syncthreads();
    float total = 0.f;
    for (int w = 0; w < kWarps; ++w) total += t[w];
    return total;
  }
};

// A staged state: element (kk, j) at kk * kPitch + j. The odd pitch lets a warp read along a
// row (32 j) or down a column (32 kk) without bank conflicts, and store either way.
constexpr int kPitch = sc::kDim + 1;
constexpr int kStateLoads = sc::kDim * sc::kDim / kThreads;                     // per thread
constexpr int kRowLoads = (sc::kRows * sc::kDim + kThreads - 1) / kThreads;     // per thread

struct ShortSmem {
  sc::GroupWork group;
  sc::HeadWork head;
  float s[sc::kDim * kPitch];   // S, then dh0
  float ds[sc::kDim * kPitch];  // dS'
  float totals[2][kWarps];
};
// The opt-in limit of an sm_90 CTA.
static_assert(sizeof(ShortSmem) <= 227 * 1024, "the short-chunk CTA's shared memory");

// Where a head's S or dS' comes from: fp32 (h0, dht) in the caller's layout, or the
// recompute's 16-bit S^T; none when it is zero. Element e of the source, in memory order, is
// (a, b) = (e / 128, e % 128): (kk, j), or (j, kk) where `transposed` (always for S^T).
struct StateSource {
  const float* f32;
  const uint16_t* b16;
  bool transposed;
  __device__ bool present() const { return f32 != nullptr || b16 != nullptr; }
};

__device__ __forceinline__ int staged_offset(int e, bool transposed) {
  const int a = e / sc::kDim, b = e % sc::kDim;
  return transposed ? b * kPitch + a : a * kPitch + b;
}

__device__ __forceinline__ float from16(uint32_t bits, bool bf16) {
  const auto h = static_cast<unsigned short>(bits);
  return bf16 ? __bfloat162float(__ushort_as_bfloat16(h)) : __half2float(__ushort_as_half(h));
}

// An fp32 state straight into its tile (4-byte asynchronous copies: no registers held while
// they are in flight), coalesced in the source's order. Each branch's addresses are immediate
// offsets from one register.
__device__ __forceinline__ void copy_state_f32(const StateSource& src, float* tile) {
  const int a = threadIdx.x / sc::kDim, b = threadIdx.x % sc::kDim;
  constexpr int kRowStep = kThreads / sc::kDim;  // source rows per round
  const float* from = src.f32 + threadIdx.x;
  if (src.transposed) {
    float* to = tile + b * kPitch + a;
#pragma unroll
    for (int m = 0; m < kStateLoads; ++m) fused::cp_async_4(to + m * kRowStep, from + m * kThreads);
  } else {
    float* to = tile + a * kPitch + b;
#pragma unroll
    for (int m = 0; m < kStateLoads; ++m)
      fused::cp_async_4(to + m * kRowStep * kPitch, from + m * kThreads);
  }
}

// The 16-bit S^T is read two elements (kk, kk + 1 of one j) a load and converted on the way.
// In a round the CTA reads 4 j x 64 pairs; a warp takes 16 pairs of 2 j (lanes 0-15 and
// 16-31), 64 contiguous bytes each, so that its stores (bank kk + j) miss each other.
constexpr int kPairLoads = kStateLoads / 2;

__device__ __forceinline__ void pair_position(int& j, int& pair) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  j = 2 * (warp / 4) + lane / 16;
  pair = 16 * (warp % 4) + lane % 16;
}

__device__ __forceinline__ void load_state_b16(const StateSource& src,
                                               uint32_t (&raw)[kPairLoads]) {
  int j, pair;
  pair_position(j, pair);
  const auto* from = reinterpret_cast<const uint32_t*>(src.b16) + j * (sc::kDim / 2) + pair;
#pragma unroll
  for (int m = 0; m < kPairLoads; ++m) raw[m] = from[m * kThreads];
}

__device__ __forceinline__ void store_state_b16(const uint32_t (&raw)[kPairLoads], float* tile,
                                                bool bf16) {
  constexpr int kRowStep = kThreads / (sc::kDim / 2);  // j per round
  int j, pair;
  pair_position(j, pair);
  float* to = tile + 2 * pair * kPitch + j;
#pragma unroll
  for (int m = 0; m < kPairLoads; ++m) {
    to[m * kRowStep] = from16(raw[m] & 0xffffu, bf16);
    to[m * kRowStep + kPitch] = from16(raw[m] >> 16, bf16);
  }
}

// Rows 0..L-1 of one head of two token-major [tokens, heads, 128] 16-bit tensors (q and k, or v
// and dO): read into registers with every load in flight, then converted into the work arrays.
struct RowPair {
  uint32_t a[kRowLoads], b[kRowLoads];
};

__device__ __forceinline__ void load_rows(RowPair& out, const void* a, const void* b,
                                          int64_t tok_begin, int heads, int head, int rows) {
  const auto* a16 = static_cast<const uint16_t*>(a);
  const auto* b16 = static_cast<const uint16_t*>(b);
#pragma unroll
  for (int m = 0; m < kRowLoads; ++m) {
    const int i = threadIdx.x + m * kThreads;
    if (i >= rows) continue;
    const int64_t off = ((tok_begin + i / sc::kDim) * heads + head) * sc::kDim + i % sc::kDim;
    out.a[m] = a16[off];
    out.b[m] = b16[off];
  }
}

__device__ __forceinline__ void store_rows(const RowPair& in, float (*a)[sc::kDim],
                                           float (*b)[sc::kDim], int rows, bool bf16) {
#pragma unroll
  for (int m = 0; m < kRowLoads; ++m) {
    const int i = threadIdx.x + m * kThreads;
    if (i >= rows) continue;
    a[i / sc::kDim][i % sc::kDim] = from16(in.a[m], bf16);
    b[i / sc::kDim][i % sc::kDim] = from16(in.b[m], bf16);
  }
}

// Where a short chunk's head part of dq, dk waits for the group sum (ShortChunkParams::dstate16).
constexpr int kPartFloats = sc::kRows * sc::kDim;  // one of dq, dk
static_assert(2 * kPartFloats * sizeof(float) <= sc::kDim * sc::kDim * sizeof(uint16_t),
              "the dq, dk parts fit the head's dstate16 slot");
__device__ __forceinline__ float* head_part(const ShortChunkParams& p, int64_t chunk, int h) {
  return reinterpret_cast<float*>(p.dstate16 + (chunk * p.d.Hv + h) * int64_t(sc::kDim * sc::kDim));
}

// The sequence's last chunk when it is short (false: nothing to repair).
__device__ __forceinline__ bool short_last_chunk(const ShortChunkParams& p, int64_t n,
                                                 int64_t& chunk, ChunkInfo& ci) {
  const int64_t first = p.chunk_first[n], end = p.chunk_first[n + 1];
  if (end <= first) return false;  // an empty sequence
  chunk = end - 1;
  ci = p.table[chunk];
  return ci.len > 0 && ci.len < kShortChunkRows;  // else the last chunk is full
}

// One CTA per (sequence, value head).
__global__ void __launch_bounds__(kThreads) short_chunk_kernel(ShortChunkParams p) {
  const Dims& d = p.d;
  const int64_t n = blockIdx.x;
  int64_t chunk;
  ChunkInfo ci;
  if (!short_last_chunk(p, n, chunk, ci)) return;
  const bool starts_sequence = chunk == p.chunk_first[n];
  const int L = ci.len, h = blockIdx.y, kh = h / d.group;
  extern __shared__ __align__(16) char smem_raw[];
  ShortSmem& sm = *reinterpret_cast<ShortSmem*>(smem_raw);
  BlockExec x{sm.totals};
  sc::GroupWork& gw = sm.group;
  sc::HeadWork& hw = sm.head;
  const int rows = L * sc::kDim;

  {  // q, k of the q/k head's rows; dq, dk start at 0.
    RowPair qk;
    load_rows(qk, p.q, p.k, ci.tok_begin, d.Hk, kh, rows);
    store_rows(qk, gw.q, gw.k, rows, d.in_bf16);
    for (int i = threadIdx.x; i < rows; i += kThreads)
      gw.dq[i / sc::kDim][i % sc::kDim] = gw.dk[i / sc::kDim][i % sc::kDim] = 0.f;
  }
  const StateSource no_state{nullptr, nullptr, false};
  const int64_t state = staged::state_index(d, n, h, 0, 0);
  // S: the caller's h0 where the chunk starts the sequence (none without one), else the
  // recompute's 16-bit S^T; dS' = dht (none without one).
  const uint16_t* recomputed = p.states16 + (chunk * d.Hv + h) * int64_t(sc::kDim * sc::kDim);
  const StateSource s_src =
      starts_sequence ? (p.h0 ? StateSource{p.h0 + state, nullptr, d.state_vk} : no_state)
                      : StateSource{nullptr, recomputed, true};
  const StateSource ds_src = p.dht ? StateSource{p.dht + state, nullptr, d.state_vk} : no_state;
  const sc::StateInputs in{s_src.present(), ds_src.present(), starts_sequence && p.dh0 != nullptr};

  {  // Every load of the head in flight before the first store.
    if (s_src.f32) copy_state_f32(s_src, sm.s);
    if (ds_src.f32) copy_state_f32(ds_src, sm.ds);
    fused::cp_async_commit();
    uint32_t s_raw[kPairLoads];
    if (s_src.b16) load_state_b16(s_src, s_raw);
    RowPair vo;
    load_rows(vo, p.v, p.d_o, ci.tok_begin, d.Hv, h, rows);
    float gam = 0.f, beta = 0.f;
    if (threadIdx.x < L) {
      const int64_t tok = ci.tok_begin + threadIdx.x;
      gam = p.gcum[tok * d.Hv + h];
      beta = staged::load_beta(p.beta, tok * d.Hv + h, d);
    }
    if (s_src.b16) store_state_b16(s_raw, sm.s, d.in_bf16);
    store_rows(vo, hw.w, hw.d_o, rows, d.in_bf16);
    if (threadIdx.x < L) {
      hw.gam[threadIdx.x] = gam;
      hw.beta[threadIdx.x] = beta;
    }
    fused::cp_async_wait_groups<0>();
    __syncthreads();
  }
  const auto S = [&](int kk, int j) -> float { return sm.s[kk * kPitch + j]; };
  const auto dS = [&](int kk, int j) -> float { return sm.ds[kk * kPitch + j]; };
  const auto dh0 = [&](int kk, int j, float value) { sm.s[kk * kPitch + j] = value; };
  sc::head_backward(x, gw, hw, L, d.scale, in, S, dS, dh0);

  // dv, dg, dbeta of the head; dh0 from where S was, in the caller's layout.
  x.each_nowait(rows, [&](int i) {
    const int r = i / sc::kDim, c = i % sc::kDim;
    const int64_t tok = ci.tok_begin + r;
    staged::store_in(p.dv, (tok * d.Hv + h) * sc::kDim + c, hw.w[r][c], d.in_bf16);
    if (c == 0) {
      p.dg[tok * d.Hv + h] = hw.dg[r];
      staged::store_beta(p.dbeta, tok * d.Hv + h, hw.dbeta[r], d);
    }
  });
  x.each_nowait(in.want_dh0 ? sc::kDim * sc::kDim : 0,
                [&](int e) { p.dh0[state + e] = sm.s[staged_offset(e, d.state_vk)]; });
  // dq, dk: whole where the head is its q/k head's only one, else this head's part (0 + its
  // terms, as the group's first head adds them) for the group sum.
  float* part = d.group > 1 ? head_part(p, chunk, h) : nullptr;
  x.each_nowait(rows, [&](int i) {
    const int r = i / sc::kDim, c = i % sc::kDim;
    if (part) {
      part[i] = gw.dq[r][c];
      part[kPartFloats + i] = gw.dk[r][c];
      return;
    }
    const int64_t off = ((ci.tok_begin + r) * d.Hk + kh) * sc::kDim + c;
    staged::store_in(p.dq, off, gw.dq[r][c], d.in_bf16);
    staged::store_in(p.dk, off, gw.dk[r][c], d.in_bf16);
  });
}

// One CTA per (sequence, q/k head) with more than one value head: dq, dk of a short last chunk,
// the heads' parts added in head order from zero, as one CTA walking the group added them.
__global__ void __launch_bounds__(kThreads) short_chunk_group_sum_kernel(ShortChunkParams p) {
  const Dims& d = p.d;
  int64_t chunk;
  ChunkInfo ci;
  if (!short_last_chunk(p, blockIdx.x, chunk, ci)) return;
  const int kh = blockIdx.y, rows = ci.len * sc::kDim;
  for (int i = threadIdx.x; i < rows; i += kThreads) {
    float q = 0.f, k = 0.f;
    for (int hi = 0; hi < d.group; ++hi) {
      const float* part = head_part(p, chunk, kh * d.group + hi);
      q += part[i];
      k += part[kPartFloats + i];
    }
    const int64_t off = ((ci.tok_begin + i / sc::kDim) * d.Hk + kh) * sc::kDim + i % sc::kDim;
    staged::store_in(p.dq, off, q, d.in_bf16);
    staged::store_in(p.dk, off, k, d.in_bf16);
  }
}

}  // namespace

cudaError_t launch_short_chunk_repair(const ShortChunkParams& p, cudaStream_t stream) {
  if (p.d.num_seqs == 0) return cudaSuccess;
  const size_t smem = sizeof(ShortSmem);
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(short_chunk_kernel), smem);
  if (err != cudaSuccess) return err;
  // A CTA per value head: the heads of a group run side by side (walked in one CTA, the
  // repair's barrier-bound steps added up over the group).
  const auto seqs = static_cast<unsigned>(p.d.num_seqs);
  short_chunk_kernel<<<dim3(seqs, static_cast<unsigned>(p.d.Hv)), kThreads, smem, stream>>>(p);
  if (p.d.group > 1)
    short_chunk_group_sum_kernel<<<dim3(seqs, static_cast<unsigned>(p.d.Hk)), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn::bwd
