// The local-gradient kernel of the chunked backward (see local_grads.cuh).
#include "local_grads.cuh"
#include "wg_fragments.cuh"

#include <algorithm>

#include "arch/grid_dependency.cuh"
#include "prepare/scheduler.cuh"  // order_by_unit, chunk_of_slot_from_end
#include "staged/kernels.cuh"     // device_sm_count

namespace gdn::bwd {
namespace {

using fused::load_a;
using fused::load_a_trans;
using fused::load_b_kn;

// Publishes shared-memory writes (st.shared, cp.async) to the whole CTA, wgmma's reads
// (async proxy) included.
__device__ __forceinline__ void publish() {
  fused::fence_proxy_async_shared();
  __syncthreads();
}

// acc += A B with B stored row-major (rows = depth, columns n0..); A row-major at r0 (kTransA:
// A = X^T with the tile storing X, rows = depth).
template <int NT, class Elem, bool kTransA>
__device__ __forceinline__ void gemm_a_bkn(float (&acc)[NT][4], const Tile& a, int r0,
                                           const Tile& b, int n0, int depth) {
  using Ops = fused::ElemOps<Elem>;
  for (int kk = 0; kk < depth / 16; ++kk) {
    uint32_t fa[4];
    if (kTransA)
      load_a_trans(fa, a, r0, 16 * kk);
    else
      load_a(fa, a, r0, 16 * kk);
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t fb[4];
      load_b_kn(fb, b, 16 * kk, n0 + 16 * np);
      Ops::mma(acc[2 * np], fa, fb[0], fb[1]);
      Ops::mma(acc[2 * np + 1], fa, fb[2], fb[3]);
    }
  }
}

// cp.async of a 64-row, 128-column 16-bit token tile (rows past len zero-filled).
template <class Elem>
__device__ __forceinline__ void load_token_tile(const Tile& dst, const void* src,
                                                const ChunkInfo& ci, int heads, int head) {
  const Elem* base = static_cast<const Elem*>(src);
  for (int e = threadIdx.x; e < kC * (kK / 8); e += kLocalThreads) {
    const int r = e / (kK / 8), c = (e % (kK / 8)) * 8;
    const bool valid = r < ci.len;
    const int64_t off = ((ci.tok_begin + (valid ? r : 0)) * heads + head) * kK + c;
    fused::cp_async_16(dst.at(r, c), base + off, valid ? 16 : 0);
  }
}

__device__ __forceinline__ void load_state_tile(const Tile& dst, const uint16_t* src) {
  for (int e = threadIdx.x; e < kK * (kV / 8); e += kLocalThreads) {
    const int r = e / (kV / 8), c = (e % (kV / 8)) * 8;
    fused::cp_async_16(dst.at(r, c), src + r * kV + c, 16);
  }
}

// This warp's part of <S, dS'> from the 16-bit tiles, in a fixed order: S^T (rows = value
// columns) and dS' (rows = state rows) store each other's transpose, so an ldmatrix of a 16 x 16
// block of one and a transposing ldmatrix of the same block of the other give each lane the
// same eight (k, v) elements of both.
template <class Elem>
__device__ __forceinline__ float state_dot16(const Tile& s_t, const Tile& ds) {
  using Ops = fused::ElemOps<Elem>;
  float acc = 0.f;
  for (int b = threadIdx.x / 32; b < (kV / 16) * (kK / 16); b += kLocalThreads / 32) {
    const int v0 = 16 * (b / (kK / 16)), k0 = 16 * (b % (kK / 16));
    uint32_t fs[4], fd[4];
    load_a(fs, s_t, v0, k0);
    load_a_trans(fd, ds, v0, k0);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 x = Ops::unpack(fs[i]), y = Ops::unpack(fd[i]);
      acc = fmaf(x.x, y.x, fmaf(x.y, y.y, acc));
    }
  }
  return acc;
}

// One unit of the local kernel: an item (chunk, slot of value heads; past the last: none left)
// and the head within it.
struct Unit {
  int64_t item;
  int head_i;
};

// Beside the chain, the order of the items: by a chunk's distance from its sequence's end
// first, then by sequence (the chain walks every sequence from its end at once), unless the
// sequences are so ragged that more than half of those (distance, sequence) slots would be
// empty; then by chunk from the last.
struct ChainOrder {
  int64_t seqs, longest, total;  // sequences; chunks of the longest, of all
  bool by_sequence;
  // Sets chunk to the chunk of slot s; false when the slot is empty.
  __device__ bool chunk_of(int64_t s, const int64_t* chunk_first, int64_t& chunk) const {
    if (!by_sequence) {
      chunk = total - 1 - s;
      return true;
    }
    return staged::chunk_of_slot_from_end(s, chunk_first, 1, seqs, chunk);
  }
  __device__ int64_t slots() const { return by_sequence ? seqs * longest : total; }
};

// The chain order of this launch into o, shared (a block-wide maximum over the sequences'
// chunk counts; kept in shared memory, not in the registers of the kernel's loop).
__device__ void chain_order(const int64_t* chunk_first, int64_t seqs, ChainOrder& o) {
  __shared__ unsigned long long longest;
  if (threadIdx.x == 0) longest = 0;
  __syncthreads();
  unsigned long long m = 0;
  for (int64_t n = threadIdx.x; n < seqs; n += kLocalThreads)
    m = max(m, static_cast<unsigned long long>(chunk_first[n + 1] - chunk_first[n]));
  atomicMax(&longest, m);
  __syncthreads();
  if (threadIdx.x == 0) {
    o.seqs = seqs;
    o.longest = static_cast<int64_t>(longest);
    o.total = chunk_first[seqs];
    o.by_sequence = staged::order_by_unit(seqs, o.longest, o.total);
  }
  __syncthreads();
}

// A row's gamma, the chunk's last gamma and beta, loaded a unit ahead (threads < kC).
struct RowInputs {
  float gam = 0.f, glast = 0.f, beta = 0.f;
};

// kBeside: beside the chain (p.ready set); a separate instance, so that the kernel after the
// chain keeps its registers (the loop's are full: spills move with any added state).
template <class Elem, bool kBeside>
__global__ void __launch_bounds__(kLocalThreads, 1) local_grads_kernel(LocalParams p) {
  using Ops = fused::ElemOps<Elem>;
  const Dims& d = p.d;
  // Persistent: after the chain, the CTA walks the items (item = chunk * slots + slot) from
  // blockIdx.x in steps of the grid. Beside it, the CTAs take ordinals from a shared queue
  // (p.queue; the CTAs that start as chain CTAs finish would otherwise find a full share left),
  // ord / slots a slot of the chain's order (ChainOrder, in shared memory: the loop's registers
  // are full). An item's value heads are heads_per_cta of one q/k head's group, walked in
  // order. Each item is one CTA's, whichever, so the results do not depend on the schedule.
  const int heads = p.heads_per_cta, slots = d.Hv / heads;
  __shared__ ChainOrder order;
  __shared__ int64_t queued_item;  // beside the chain: thread 0's take, read after a barrier
  if (kBeside) chain_order(p.chunk_first, d.num_seqs, order);
  const int64_t items = int64_t(d.max_chunks) * slots;
  const auto next_item = [&](int64_t i) {  // the CTA's next item of a non-empty chunk
    for (i += gridDim.x; i < items && p.table[i / slots].len == 0; i += gridDim.x) {
    }
    return i;
  };
  // Thread 0: the queue's next ordinal of a non-empty item, as its item (or items: none).
  const auto take_queued = [&] {
    const int64_t ords = order.slots() * slots;
    for (int64_t o = atomicAdd(p.queue, 1u); o < ords; o = atomicAdd(p.queue, 1u)) {
      int64_t chunk;
      if (!order.chunk_of(o / slots, p.chunk_first, chunk) || p.table[chunk].len == 0) continue;
      queued_item = chunk * slots + o % slots;
      return;
    }
    queued_item = items;
  };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int rm = 16 * (warp % 4), wc = warp / 4, cn = 64 * wc, cq = 32 * wc;
  extern __shared__ __align__(1024) char smem_raw[];  // wgmma operand tiles: 1024-byte aligned
  const LocalSmem sm{smem_raw};
  LocalVectors& vec = sm.vec();
  // sS holds S^T (rows = value columns, columns = state rows).
  const Tile sS = sm.s(), sDS = sm.ds(), sQ = sm.rows(0), sDO = sm.rows(2), sVN = sm.rows(3),
             sDVN = sm.rows(4), sW = sm.rows(5), sDW = sm.rows(6);

  // The loads of a unit that its predecessor's phase B leaves room for, one cp.async group:
  // S^T, dS', v, dW', dV_new, T into slot t_slot and, on the item's first head, k into k_slot.
  // Beside the chain, it first waits until the chain's V-blocks of the unit's (chunk, v-head)
  // have published dS', dv and dV_new (lane 0 of each warp polls; the warp barrier orders the
  // other lanes' copies after its acquire).
  const auto load_ahead = [&](Unit u, int k_slot, int t_slot) {
    const int64_t chunk = u.item / slots;
    const ChunkInfo ci = p.table[chunk];
    const int slot = static_cast<int>(u.item % slots), h = slot * heads + u.head_i;
    if (kBeside) {
      if (lane == 0) wait_until_at_least(p.ready + chunk * d.Hv + h, p.ready_target);
      __syncwarp();
    }
    const int64_t state_off = (chunk * d.Hv + h) * int64_t(kK * kV);
    load_state_tile(sS, p.states16 + state_off);
    load_state_tile(sDS, p.dstate16 + state_off);
    if (u.head_i == 0) load_token_tile<Elem>(sm.k(k_slot), p.k, ci, d.Hk, slot * heads / d.group);
    load_token_tile<Elem>(sW, p.v, ci, d.Hv, h);
    const uint16_t* tsrc = p.t16 + (chunk * d.Hv + h) * int64_t(kC * kC);
    const Tile sTn = sm.t(t_slot);
    for (int e = threadIdx.x; e < kC * (kC / 8); e += kLocalThreads) {
      const int r = e / (kC / 8), c = (e % (kC / 8)) * 8;
      fused::cp_async_16(sTn.at(r, c), tsrc + r * kC + c, 16);
    }
    load_token_tile<Elem>(sDW, p.dv, ci, d.Hv, h);
    load_token_tile<uint16_t>(sDVN, p.dvnew16, ci, d.Hv, h);
    fused::cp_async_commit();
  };
  const auto load_row_inputs = [&](Unit u) {
    RowInputs x;
    if (threadIdx.x < kC) {
      const ChunkInfo ci = p.table[u.item / slots];
      const int h = static_cast<int>(u.item % slots) * heads + u.head_i, r = threadIdx.x;
      const int rr = r < ci.len ? r : ci.len - 1;  // padded rows repeat the last gamma
      x.gam = p.gcum[(ci.tok_begin + rr) * d.Hv + h];
      x.glast = p.gcum[(ci.tok_begin + ci.len - 1) * d.Hv + h];
      x.beta = r < ci.len ? staged::load_beta(p.beta, (ci.tok_begin + r) * d.Hv + h, d) : 0.f;
    }
    return x;
  };

  Unit u{blockIdx.x, 0};
  if (kBeside) {
    if (threadIdx.x == 0) take_queued();
    __syncthreads();
    u.item = queued_item;
  } else if (u.item < items && p.table[u.item / slots].len == 0) {
    u.item = next_item(u.item);
  }
  if (u.item >= items) {
    if (kBeside) wait_for_prior_grids();  // (see the end)
    return;
  }
  int k_slot = 0, t_slot = 0;  // the unit's k and T slots
  load_ahead(u, k_slot, t_slot);
  RowInputs rin = load_row_inputs(u);
  // dq, dk of the current head (set by G1 and G3); their sum over the heads before it is in
  // dq_h, dk_h.
  float dq[8][4], dk[8][4];
  while (true) {
    const int64_t chunk = u.item / slots;
    const ChunkInfo ci = p.table[chunk];
    const int slot = static_cast<int>(u.item % slots), head_i = u.head_i;
    const int kh = slot * heads / d.group, h = slot * heads + head_i;
    const bool first_chunk = chunk == p.chunk_first[ci.seq];
    const bool last_chunk = chunk + 1 == p.chunk_first[ci.seq + 1];
    const Tile sK = sm.k(k_slot), sT = sm.t(t_slot), sTb = sm.t(t_slot ^ 1);
    Unit next = head_i + 1 < heads ? Unit{u.item, head_i + 1} : Unit{kBeside ? 0 : next_item(u.item), 0};
    // (queued_item was last read after this barrier of the unit before)
    if (kBeside && head_i + 1 == heads && threadIdx.x == 0) take_queued();
    publish();  // the previous unit's last readers of shared memory are done
    if (kBeside && head_i + 1 == heads) next.item = queued_item;
    // dO (and q on the item's first head), waited for just before G1; the rest is in flight
    // since the previous unit's phase B.
    load_token_tile<Elem>(sDO, p.d_o, ci, d.Hv, h);
    if (head_i == 0) load_token_tile<Elem>(sQ, p.q, ci, d.Hk, kh);
    fused::cp_async_commit();
    if (threadIdx.x < kC) {
      const int r = threadIdx.x;
      vec.gam[r] = rin.gam;
      vec.e[r] = expf(rin.gam);
      vec.f[r] = expf(rin.glast - rin.gam);
      vec.beta[r] = rin.beta;
    }
    fused::cp_async_wait_groups<1>();
    publish();  // the ahead group and the vectors

    // ---- A. the products with S and dS' ------------------------------------------------------
    // W' = V - diag(e) K S: its 16-bit rounding in place of V (each thread rewrites the elements
    // it read). T diag(beta) is formed while K S runs.
    {
      float wp[8][4];
      wg_issue<8, kK, Elem, false, true, true>(wp, sK, sS, cn);
      for (int e = threadIdx.x; e < kC * (kC / 2); e += kLocalThreads) {
        const int r = e / (kC / 2), c = (e % (kC / 2)) * 2;
        const float2 x = Ops::unpack(sT.pair(r, c));
        sTb.pair(r, c) = Ops::pack(x.x * vec.beta[c], x.y * vec.beta[c + 1]);
      }
      wg_wait<0>(wp);
#pragma unroll
      for (int nj = 0; nj < 8; ++nj) {
        const int col = cn + 8 * nj + 2 * t;
        const int ra = rm + g, rb = ra + 8;
        const float2 va = Ops::unpack(sW.pair(ra, col)), vb = Ops::unpack(sW.pair(rb, col));
        sW.pair(ra, col) = Ops::pack(va.x - vec.e[ra] * wp[nj][0], va.y - vec.e[ra] * wp[nj][1]);
        sW.pair(rb, col) = Ops::pack(vb.x - vec.e[rb] * wp[nj][2], vb.y - vec.e[rb] * wp[nj][3]);
      }
    }
    fused::cp_async_wait_groups<0>();
    publish();  // W', T diag(beta), dO and q complete
    // V_new = (T diag(beta)) W', G1 = dO S^T and G3 = dW' S^T queued together; each
    // epilogue runs while the products after it are on the tensor cores.
    {
      float vn[8][4];
      wg_issue<8, kC, Elem, false, false, true>(vn, sTb, sW, cn);
      wg_issue<8, kV, Elem, false, false, true>(dq, sDO, sS, cn);
      wg_issue<8, kV, Elem, false, false, true>(dk, sDW, sS, cn);
      wg_wait<2>(vn);
      store16<8, Elem>(sVN, vn, rm, cn);
    }
    // G1 -> dq = scale diag(e) G1; (Q o G1) 1.
    wg_wait<1>(dq);
    row_dot<8, Elem>(dq, sQ, rm, cn, vec.rs_qs[wc]);
    each<8>(dq, rm, cn, [&](float& x, int r, int) { x *= d.scale * vec.e[r]; });
    // G3 -> dk = -diag(e) G3; (K o G3) 1.
    wg_wait<0>(dk);
    row_dot<8, Elem>(dk, sK, rm, cn, vec.rs_ksw[wc]);
    each<8>(dk, rm, cn, [&](float& x, int r, int) { x *= -vec.e[r]; });
    publish();  // V_new complete
    // G2 = V_new dS'^T, dP = dO V_new^T, Q K^T and dAg = dV_new W'^T queued.
    float dp[4][4], dag[4][4], qk[4][4];
    {
      float g2[8][4];
      wg_issue<8, kV, Elem, false, true, true>(g2, sVN, sDS, cn);
      wg_issue<4, kV, Elem, false, true, true>(dp, sDO, sVN, cq);
      wg_issue<4, kK, Elem, false, true, true>(qk, sQ, sK, cq);
      wg_issue<4, kV, Elem, false, true, true>(dag, sDVN, sW, cq);
      {
        // <S, dS'>, in a fixed order, meanwhile. A sequence's first chunk starts at h0 and its
        // last ends at dht: there the caller's fp32 values, not their 16-bit copies. A one-token
        // sequence's dg is e <S, dS' + ...>, one sum of 16384 products that may nearly cancel,
        // where 16-bit S and dS' miss the bar on about one draw in 13 (with these, one in 400).
        const bool s_exact = first_chunk && p.h0 != nullptr, ds_exact = last_chunk && p.dht != nullptr;
        float sdot = 0.f;
        if (!s_exact && !ds_exact) {
          sdot = state_dot16<Elem>(sS, sDS);
        } else {
          for (int e = threadIdx.x; e < kK * (kV / 2); e += kLocalThreads) {
            const int v = e / (kK / 2), k = (e % (kK / 2)) * 2;  // S^T(v, k), S^T(v, k + 1)
            float2 a = Ops::unpack(sS.pair(v, k));
            if (s_exact)
              a = make_float2(p.h0[staged::state_index(d, ci.seq, h, k, v)],
                              p.h0[staged::state_index(d, ci.seq, h, k + 1, v)]);
            float b0 = Ops::unpack(*sDS.at(k, v)).x, b1 = Ops::unpack(*sDS.at(k + 1, v)).x;
            if (ds_exact) {
              b0 = p.dht[staged::state_index(d, ci.seq, h, k, v)];
              b1 = p.dht[staged::state_index(d, ci.seq, h, k + 1, v)];
            }
            sdot = fmaf(a.x, b0, fmaf(a.y, b1, sdot));
          }
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) sdot += __shfl_xor_sync(0xffffffffu, sdot, off);
        if (lane == 0) vec.sdot[warp] = sdot;
      }
      // G2 -> dk += diag(f) G2; (K o G2) 1.
      wg_wait<3>(g2);
      row_dot<8, Elem>(g2, sK, rm, cn, vec.rs_kds[wc]);
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[nj][e] += vec.f[rm + g + (e >= 2 ? 8 : 0)] * g2[nj][e];
    }
    wg_wait<0>(dp);
    fused::fence_accumulators(qk);
    fused::fence_accumulators(dag);
    publish();  // S^T, dS', dV_new, W' and dW' are free
    // The next unit's tiles load while this one's 64 x 64 phase runs.
    const bool more = next.item < items;
    if (more) {
      const int next_k_slot = next.head_i == 0 ? k_slot ^ 1 : k_slot;
      load_ahead(next, next_k_slot, t_slot ^ 1);
      rin = load_row_inputs(next);
    }

    // ---- B. the 64 x 64 products ---------------------------------------------------------------
    const Tile sP = sm.tile64(0), sDT = sm.tile64(1), sX = sm.tile64(2), sZ = sm.tile64(3);
    FragSums<4> mg;  // rows - columns of (dPm o Q K^T + Z o K K^T) -> dgamma
    {
      float dbeta_col[4][2] = {};  // columns of dAg o T
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int c0 = cq + 8 * nj + 2 * t;
        const float2 ta = Ops::unpack(sT.pair(rm + g, c0)), tb = Ops::unpack(sT.pair(rm + g + 8, c0));
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = rm + g + (e >= 2 ? 8 : 0), j = c0 + (e & 1);
          float& x = dp[nj][e];
          x = i >= j ? d.scale * x * expf(vec.gam[i] - vec.gam[j]) : 0.f;
          mg.add(nj, e, x * qk[nj][e]);
        }
        dbeta_col[nj][0] = fmaf(dag[nj][0], ta.x, dag[nj][2] * tb.x);
        dbeta_col[nj][1] = fmaf(dag[nj][1], ta.y, dag[nj][3] * tb.y);
#pragma unroll
        for (int e = 0; e < 4; ++e) dag[nj][e] *= vec.beta[c0 + (e & 1)];  // dT = dAg diag(beta)
      }
      store_column_sums(dbeta_col, vec.dbeta_cols[warp % 4], cq);
    }
    store16<4, Elem>(sP, dp, rm, cq);
    store16<4, Elem>(sDT, dag, rm, cq);
    publish();

    // dq and dk go out as soon as each is complete: added to the running sum of the heads
    // before (which this thread wrote: no barrier), in head order; after the last head the sum
    // goes out, whole in the input dtype when the CTA walked the entire group, else as this
    // slot's fp32 partial for the group sum. dq goes out in the middle of phase B, where the
    // stores drain under the products after it; dk's running sum loads while Z K and Z^T K run.
    const bool to_output = head_i == heads - 1 && heads == d.group;
    const auto row_offset = [&](int nj, int half) {  // into [Ttot, slots, K]
      return (ci.tok_begin + rm + g + 8 * half) * slots * kK + slot * kK + cn + 8 * nj + 2 * t;
    };
    const auto load_running = [&](const float* src, float2 (&run)[8][2]) {
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int half = 0; half < 2; ++half)
          run[nj][half] = head_i > 0 && rm + g + 8 * half < ci.len
                              ? *reinterpret_cast<const float2*>(src + row_offset(nj, half))
                              : make_float2(0.f, 0.f);
    };
    const auto emit = [&](const float (&acc)[8][4], const float2 (&run)[8][2], float* partial,
                          void* out) {
#pragma unroll
      for (int nj = 0; nj < 8; ++nj)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = rm + g + 8 * half;
          if (r >= ci.len) continue;
          float2 x = make_float2(acc[nj][2 * half], acc[nj][2 * half + 1]);
          if (head_i > 0) x = make_float2(run[nj][half].x + x.x, run[nj][half].y + x.y);
          if (to_output) {
            const int64_t o = ((ci.tok_begin + r) * d.Hk + kh) * kK + cn + 8 * nj + 2 * t;
            *reinterpret_cast<uint32_t*>(static_cast<Elem*>(out) + o) = Ops::pack(x.x, x.y);
          } else {
            *reinterpret_cast<float2*>(partial + row_offset(nj, half)) = x;
          }
        }
    };
    wg_issue<8, kC, Elem, false, false>(dq, sP, sK, cn);  // dq += dPm K
    wg_issue<8, kC, Elem, true, false>(dk, sP, sQ, cn);   // dk += dPm^T Q
    {
      // X = T^T dT on mma.sync meanwhile (its B, columns 32.. of one swizzle atom, is no
      // wgmma operand).
      float x[4][4] = {};
      gemm_a_bkn<4, Elem, true>(x, sT, rm, sDT, cq, kC);
      store16<4, Elem>(sX, x, rm, cq);
    }
    wg_wait<0>(dq);
    fused::fence_accumulators(dk);
    float2 run[8][2];
    load_running(p.dq_h, run);
    emit(dq, run, p.dq_h, p.dq);
    publish();  // X complete

    {
      float da[4][4], kk[4][4];
      wg_issue<4, kC, Elem, false, true, true>(da, sX, sT, cq);  // X T^T
      wg_issue<4, kK, Elem, false, true, true>(kk, sK, sK, cq);  // K K^T
      wg_wait<0>(da);
      fused::fence_accumulators(kk);

      float db_row[2] = {0.f, 0.f};  // rows of dA o K K^T o Gam
#pragma unroll
      for (int nj = 0; nj < 4; ++nj)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = rm + g + (e >= 2 ? 8 : 0), j = cq + 8 * nj + 2 * t + (e & 1);
          float z = 0.f;
          if (i > j) {
            const float grad_a = -da[nj][e];
            const float gam = expf(vec.gam[i] - vec.gam[j]);
            const float kkg = kk[nj][e] * gam;
            db_row[e >> 1] = fmaf(grad_a, kkg, db_row[e >> 1]);
            z = grad_a * vec.beta[i] * gam;
            mg.add(nj, e, grad_a * vec.beta[i] * kkg);  // Z o K K^T
          }
          da[nj][e] = z;
        }
      store_row_sums(db_row, vec.db_rows[wc], rm);
      store16<4, Elem>(sZ, da, rm, cq);
    }
    store_row_sums(mg.row, vec.dgam_rows[wc], rm);
    store_column_sums(mg.col, vec.dgam_cols[warp % 4], cq);
    publish();  // Z and every partial sum complete

    wg_issue<8, kC, Elem, false, false>(dk, sZ, sK, cn);  // dk += Z K
    wg_issue<8, kC, Elem, true, false>(dk, sZ, sK, cn);   // dk += Z^T K
    load_running(p.dk_h, run);
    // ---- C. dg and dbeta by warp 0 (two rows per lane) while Z K and Z^T K run ---------------
    if (warp == 0) {
      float sdot = 0.f;
      for (int w = 0; w < kLocalThreads / 32; ++w) sdot += vec.sdot[w];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = lane + 32 * half;
        const float rs_qs = vec.rs_qs[0][r] + vec.rs_qs[1][r];
        const float rs_ksw = vec.rs_ksw[0][r] + vec.rs_ksw[1][r];
        const float cols = ((vec.dgam_cols[0][r] + vec.dgam_cols[1][r]) + vec.dgam_cols[2][r]) +
                           vec.dgam_cols[3][r];
        float dgam = (vec.dgam_rows[0][r] + vec.dgam_rows[1][r]) - cols;
        dgam += d.scale * vec.e[r] * rs_qs - vec.e[r] * rs_ksw;
        if (r == kC - 1) dgam += vec.e[kC - 1] * sdot;  // gamma_last scales the carried state
        vec.dgam[r] = dgam;
        vec.dbeta[r] = (((vec.dbeta_cols[0][r] + vec.dbeta_cols[1][r]) + vec.dbeta_cols[2][r]) +
                        vec.dbeta_cols[3][r]) +
                       (vec.db_rows[0][r] + vec.db_rows[1][r]);
        // The f terms (see the header): the exclusive prefix of f_r (K dS')_r . V_new_r.
        vec.fsum[r] = r > 0 ? vec.f[r - 1] * (vec.rs_kds[0][r - 1] + vec.rs_kds[1][r - 1]) : 0.f;
      }
      __syncwarp();
      staged::chunk_reverse_cumsum_warp0(vec.dgam, vec.dgam);
      staged::chunk_cumsum_warp0(vec.fsum, vec.fsum);
      __syncwarp();
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = lane + 32 * half;
        if (r < ci.len) {
          const int64_t gi = (ci.tok_begin + r) * d.Hv + h;
          p.dg[gi] = vec.dgam[r] + vec.fsum[r];
          staged::store_beta(p.dbeta, gi, vec.dbeta[r], d);
        }
      }
    }
    wg_wait<0>(dk);
    emit(dk, run, p.dk_h, p.dk);
    if (!more) break;
    if (next.head_i == 0) k_slot ^= 1;
    t_slot ^= 1;
    u = next;
  }
  // Beside the chain: this grid completes only after the chain has (what follows in the stream
  // waits for this grid alone).
  if (kBeside) wait_for_prior_grids();
}

template <class Elem, bool kBeside>
cudaError_t launch_typed(const LocalParams& p, cudaStream_t stream) {
  const auto kernel = local_grads_kernel<Elem, kBeside>;
  const size_t smem = LocalSmem::bytes();
  const cudaError_t err =
      opt_into_shared_memory(reinterpret_cast<const void*>(kernel), smem, Carveout::MaxShared);
  if (err != cudaSuccess) return err;
  // One CTA per SM (its shared memory), each walking its share of the items.
  const int64_t items = p.d.max_chunks * int64_t(p.d.Hv / p.heads_per_cta);
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(items, staged::device_sm_count())));
  // Beside the chain: a programmatic dependent, launched once every chain CTA runs; its CTAs
  // take the SMs the chain leaves free, then those it frees.
  if (kBeside) return launch_after_prior(kernel, grid, kLocalThreads, smem, stream, p);
  kernel<<<grid, kLocalThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_local_grads(const LocalParams& p, cudaStream_t stream) {
  if (p.d.max_chunks == 0) return cudaSuccess;
  if (p.ready)
    return p.d.in_bf16 ? launch_typed<__nv_bfloat16, true>(p, stream)
                       : launch_typed<__half, true>(p, stream);
  return p.d.in_bf16 ? launch_typed<__nv_bfloat16, false>(p, stream)
                     : launch_typed<__half, false>(p, stream);
}

const void* local_grads_symbol(bool bf16) {
  return bf16 ? reinterpret_cast<const void*>(local_grads_kernel<__nv_bfloat16, false>)
              : reinterpret_cast<const void*>(local_grads_kernel<__half, false>);
}

}  // namespace gdn::bwd
