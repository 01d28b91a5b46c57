// Workspace carving and the launch sequence of the chunked backward (see bwd_params.cuh).
#include <algorithm>

#include "bwd_chain_launch.cuh"
#include "bwd_run.cuh"
#include "chain_inputs.cuh"
#include "fused_bwd.cuh"
#include "group_sum_beside.cuh"
#include "gdn/launch_plan.hpp"
#include "forward/kernels.cuh"
#include "forward/tensor_maps.cuh"
#include "local_grads.cuh"
#include "short_chunk.cuh"
#include "staged/kernels.cuh"
#include "staged/run.cuh"

namespace gdn::bwd {
namespace {

struct BwdWorkspace {
  int64_t* chunk_first = nullptr;
  ChunkInfo* table = nullptr;
  float* gcum = nullptr;
  uint16_t* t16 = nullptr;       // lower-packed: the column-warp recompute's operand
  uint16_t* t16_rows = nullptr;  // row-major: the reverse chain's and the local kernel's
  float* gate_ef = nullptr;
  // CP: the config's segments (the recompute's and the chain's), else the recompute's own;
  // max_segs is the capacity: the segment count of the shortest segments it can run
  fused::CpBuffers cp_bufs;
  uint16_t *states16 = nullptr, *dstate16 = nullptr, *dvnew16 = nullptr,
           *dvin16 = nullptr, *xq16 = nullptr;
  float *dq_h = nullptr, *dk_h = nullptr;
  // The chain's counts [max_chunks, Hv], then the local kernel's queue: zeroed together
  // (ready_bytes) when the local kernel runs beside the chain; or the fused kernel's counts
  // and the group sum's queue when that runs beside the fused kernel.
  int* ready = nullptr;
  unsigned* queue = nullptr;
  size_t ready_bytes = 0;
};

BwdWorkspace carve(staged::WorkspaceCarver& c, const Dims& d, const KernelConfig& config) {
  const int cp = config.cp_segment_chunks;
  const int64_t chunk_heads = d.max_chunks * d.Hv;
  BwdWorkspace w;
  w.chunk_first = c.take<int64_t>(d.num_seqs + 1);
  w.table = c.take<ChunkInfo>(d.max_chunks);
  w.gcum = c.take<float>(d.Ttot * d.Hv);
  w.t16 = c.take<uint16_t>(chunk_heads * kC * kC);
  w.t16_rows = c.take<uint16_t>(chunk_heads * kC * kC);
  w.gate_ef = c.take<float>(chunk_heads * 3 * kC);
  w.states16 = c.take<uint16_t>(chunk_heads * kK * kV);
  // The segment buffers. Without the config's CP the launch plan may run the recompute in CP
  // segments of any length it takes (its rule or a pin, neither of which the workspace query
  // sees): room for the shortest. Only the recompute uses them then, so they overlay the
  // chain's and the local gradients' buffers below, first written after the recompute.
  staged::WorkspaceCarver segments = c;
  w.cp_bufs = fused::carve_cp(segments, d, cp > 0 ? cp : plan_values::kRecomputeCp[1]);
  if (cp > 0) c = segments;  // the chain reads them too
  // dS' per chunk: the chain's output for the local kernel, and the short-chunk repair's
  // scratch (every config). The fused kernel keeps dV_new on chip.
  w.dstate16 = c.take<uint16_t>(chunk_heads * kK * kV);
  if (config.roles != WarpRoles::ProducerConsumer) w.dvnew16 = c.take<uint16_t>(d.Ttot * d.Hv * kV);
  if (config.roles == WarpRoles::Cooperative) {  // the wgmma chain forms them in shared memory
    w.dvin16 = c.take<uint16_t>(d.Ttot * d.Hv * kV);
    w.xq16 = c.take<uint16_t>(chunk_heads * kK * kV);
  }
  w.dq_h = c.take<float>(d.Ttot * d.Hv * kK);
  w.dk_h = c.take<float>(d.Ttot * d.Hv * kK);
  w.ready = c.take<int>(chunk_heads + 1);
  w.queue = reinterpret_cast<unsigned*>(w.ready + chunk_heads);
  w.ready_bytes = size_t(chunk_heads + 1) * sizeof(int);
  c.used = std::max(c.used, segments.used);
  return w;
}

// The recompute runs the column-warp loop at 64 columns (two CTAs per SM), whatever the chain's
// V-block: it is the forward's fastest layout at every anchor shape.
constexpr int kRecomputeBlockV = 64;

// dq, dk summed over each q/k head's partial sums in dq_h, dk_h (one per heads value heads of
// its group; fp32, or the input dtype with parts16), in a fixed order, into the caller's
// outputs.
cudaError_t launch_dq_dk_group_sum(const Dims& d, int heads, bool parts16, const gdn_bwd_args& a,
                                   const BwdWorkspace& w, cudaStream_t s) {
  staged::BwdParams sum{};
  sum.f.d = d;
  sum.f.d.Hv = d.Hv / heads;
  sum.f.d.group = d.group / heads;
  sum.dq_h = w.dq_h;
  sum.dk_h = w.dk_h;
  sum.parts16 = parts16;
  sum.dq = a.dq;
  sum.dk = a.dk;
  return staged::launch_group_sum(sum, s);
}

// The short-chunk repair's block: the caller's tensors, the tables, the recomputed states and
// dstate16 as its scratch.
ShortChunkParams short_chunk_params(const Dims& d, const gdn_bwd_args& a, const BwdWorkspace& w) {
  ShortChunkParams sp{};
  sp.d = d;
  sp.chunk_first = w.chunk_first;
  sp.table = w.table;
  sp.gcum = w.gcum;
  sp.states16 = w.states16;
  sp.h0 = a.h0;
  sp.dht = a.dht;
  sp.q = a.q;
  sp.k = a.k;
  sp.v = a.v;
  sp.d_o = a.d_o;
  sp.beta = a.beta;
  sp.dq = a.dq;
  sp.dk = a.dk;
  sp.dv = a.dv;
  sp.dg = a.dg;
  sp.dbeta = a.dbeta;
  sp.dh0 = a.dh0;
  sp.dstate16 = w.dstate16;
  return sp;
}

}  // namespace

size_t bwd_workspace_bytes(const gdn_problem& p, const KernelConfig& c) {
  staged::WorkspaceCarver carver{nullptr};
  carve(carver, staged::make_dims(p), c);
  return carver.used;
}

gdn_status run_backward(const gdn_problem& p, const gdn_bwd_args& a, const KernelConfig& c,
                        gdn_stream_t stream) {
  const size_t need = bwd_workspace_bytes(p, c);
  if (a.workspace_bytes < need || (!a.workspace && need > 0)) return GDN_ERROR_WORKSPACE;
  if (a.saved && a.saved->bytes < fused::saved_bytes(p, a.saved->segment_chunks))
    return GDN_ERROR_WORKSPACE;
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  const Dims d = staged::make_dims(p);
  if (d.num_seqs == 0) return GDN_OK;
  staged::WorkspaceCarver carver{static_cast<char*>(a.workspace)};
  BwdWorkspace w = carve(carver, d, c);
  // What a training forward saved (gdn_bwd_args::saved) replaces the prepare kernel's outputs;
  // the saved block is read, never written (a second backward may read it again).
  fused::SavedBuffers sv;
  if (a.saved) {
    staged::WorkspaceCarver saved{static_cast<char*>(a.saved->data)};
    sv = fused::carve_saved(saved, d, a.saved->segment_chunks);
    w.gcum = sv.gcum;
    w.t16 = sv.t16;
    w.t16_rows = sv.t16_rows;
    w.gate_ef = sv.gate_ef;
  }
  const int sms = staged::device_sm_count();
  const int cp = c.cp_segment_chunks;
  const BackwardPlan plan = plan_backward(c, plan_shape(p), PlanDevice{sms}, a.launch);
  // The recompute's segments: the config's when it has CP, else the plan's (cp stays 0 for the
  // chain), never more than the workspace holds. With the config's CP the chain's pass 1 takes
  // its M from the recompute's (TransferM::ForwardTransposed), so both must be the same.
  const int rcp = plan.recompute_cp_chunks;
  if (cp > 0 && rcp != cp) return GDN_ERROR_INTERNAL;
  const int64_t rcp_segs = rcp > 0 ? fused::max_segments(d, rcp) : 0;
  if (rcp_segs > w.cp_bufs.max_segs) return GDN_ERROR_INTERNAL;
  // The saved start states serve when the forward ran its CP in the recompute's segments: the
  // same segment table (a function of the chunk table and the length), so the same slots.
  const bool saved_starts = a.saved && sv.segment_chunks > 0 && sv.segment_chunks == rcp;

  // 1. Chunk (and segment) tables, the prepare kernel (gamma; T lower-packed and row-major;
  //    e, f, beta), the forward recompute's CP pass 1 and fix-up (its state loop, 1', follows
  //    the reverse chain's set-up).
  cudaError_t err = fused::build_tables(p, d, rcp, w.chunk_first, w.table, nullptr,
                                        w.cp_bufs.seg_first, w.cp_bufs.segs, rcp_segs, s);
  if (err == cudaSuccess && d.max_chunks > 0 && !a.saved) {
    staged::FwdParams prep{};
    prep.d = d;
    prep.q = a.q;
    prep.k = a.k;
    prep.v = a.v;
    prep.g = a.g;
    prep.beta = a.beta;
    prep.ws.chunk_first = w.chunk_first;
    prep.ws.table = w.table;
    prep.ws.gcum = w.gcum;
    prep.ws.t16 = w.t16;
    prep.ws.t16_rows = w.t16_rows;
    prep.ws.gate_ef = w.gate_ef;
    prep.ws.lower_packed16 = true;
    // The prepare grid's heads per CTA: the launch plan's (its rule, or the call's pin).
    err = staged::launch_prepare(prep, sms, plan.prepare_heads, s);
  }
  fused::FusedParams fp{};
  fp.d = d;
  fp.q = a.q;
  fp.k = a.k;
  fp.v = a.v;
  fp.beta = a.beta;
  fp.h0 = a.h0;
  fp.chunk_first = w.chunk_first;
  fp.table = w.table;
  fp.t16 = w.t16;
  fp.gate_ef = w.gate_ef;
  fp.stages = 2;
  fp.mode = fused::Mode::Output;
  if (err == cudaSuccess && d.Ttot > 0) {
    err = fused::encode_token_tile_map(&fp.tmap_q, a.q, d.Hk, d.Ttot, d.in_bf16);
    if (err == cudaSuccess) err = fused::encode_token_tile_map(&fp.tmap_k, a.k, d.Hk, d.Ttot, d.in_bf16);
    if (err == cudaSuccess) err = fused::encode_token_tile_map(&fp.tmap_v, a.v, d.Hv, d.Ttot, d.in_bf16);
  }
  if (rcp > 0) {
    fp.segs = w.cp_bufs.segs;
    fp.transfer = w.cp_bufs.transfer;
    fp.starts = saved_starts ? sv.cp_bufs.starts : w.cp_bufs.starts;
    fp.mode = fused::Mode::Transition;  // pass 1: [M | N] of every segment but the last
    if (err == cudaSuccess && !saved_starts)
      err = fused::launch_chunk_loop_cw<kRecomputeBlockV>(fp, static_cast<unsigned>(rcp_segs), s);
    if (err == cudaSuccess && !saved_starts)
      err = fused::launch_cp_fixup(d, w.cp_bufs.seg_first, w.cp_bufs.transfer, rcp_segs,
                                   w.cp_bufs.starts, plan.fixup_cols,
                                   fused::TransferM::Stored, s);
    fp.mode = fused::Mode::Output;
  }
  // 2. The reverse chain: dS' per chunk, dV_new, dv, dh0. The cooperative chain's inputs come
  //    from a launch before it; the wgmma chain forms them itself. The fused kernel runs the
  //    chain and the local gradients in one launch (its CP pass 1 is the wgmma chain's).
  const bool fused_kernel = c.roles == WarpRoles::ProducerConsumer;
  const bool wg_chain = c.roles == WarpRoles::ColumnWarps || fused_kernel;
  const WarpRoles chain_roles = fused_kernel ? WarpRoles::ColumnWarps : c.roles;
  const int chain_bv = fused_kernel ? kChainWgBV : c.block_v;
  ChainParams cp_params{};
  cp_params.d = d;
  cp_params.k = a.k;
  cp_params.beta = a.beta;
  cp_params.dvin16 = w.dvin16;
  cp_params.xq16 = w.xq16;
  cp_params.dht = a.dht;
  cp_params.dh0 = a.dh0;
  cp_params.dv = a.dv;
  cp_params.chunk_first = w.chunk_first;
  cp_params.table = w.table;
  cp_params.gcum = w.gcum;
  cp_params.t16 = w.t16_rows;
  cp_params.dstate16 = w.dstate16;
  cp_params.dvnew16 = w.dvnew16;
  if (wg_chain && err == cudaSuccess && d.Ttot > 0) {
    // The wgmma chain's TMA views (ChainParams): k and q as the recompute reads them; T
    // row-major, 64-row boxes; dO in token tiles.
    cp_params.tmap_k = fp.tmap_k;
    cp_params.tmap_q = fp.tmap_q;
    cp_params.gate_ef = w.gate_ef;
    err = fused::encode_rows16_map(&cp_params.tmap_t, w.t16_rows, d.max_chunks * d.Hv * kC, kC,
                                   kC, d.in_bf16);
    if (err == cudaSuccess)
      err = fused::encode_token_tile_map(&cp_params.tmap_do, a.d_o, d.Hv, d.Ttot, d.in_bf16);
  }
  if (cp > 0) {
    cp_params.segs = w.cp_bufs.segs;
    cp_params.seg_first = w.cp_bufs.seg_first;
    cp_params.transfer = w.cp_bufs.transfer;
    cp_params.starts = w.cp_bufs.starts;
  }
  // The chain's CP pass 1 (below) reads only the prepare kernel's outputs and the caller's
  // inputs, and the recompute's state loop nothing pass 1 writes (transfer's N columns): with
  // the plan's pass1_beside_recompute, pass 1 launches first and lets the loop launch at once,
  // on the SMs it leaves (launch_plan.cpp). The recompute's own pass 1 and fix-up, which use
  // transfer, have completed before it starts.
  const bool pass1_first = plan.pass1_beside_recompute && cp > 0 && wg_chain && d.Ttot > 0;
  if (pass1_first && err == cudaSuccess) {
    cp_params.transition = true;
    cp_params.early_dependents = true;
    err = launch_dstate_chain(cp_params, chain_roles, chain_bv, w.cp_bufs.max_segs, s);
    cp_params.transition = false;
    cp_params.early_dependents = false;
    fp.beside_prior = true;
  }

  // 1'. The forward recompute: each chunk's start state, no output.
  fp.chunk_states = w.states16;
  if (err == cudaSuccess)
    err = fused::launch_chunk_loop_cw<kRecomputeBlockV>(
        fp, static_cast<unsigned>(rcp > 0 ? rcp_segs : d.num_seqs), s);

  if (!wg_chain) {
    ChainInputsParams ip{};
    ip.d = d;
    ip.q = a.q;
    ip.k = a.k;
    ip.d_o = a.d_o;
    ip.table = w.table;
    ip.gcum = w.gcum;
    ip.dvin16 = w.dvin16;
    ip.xq16 = w.xq16;
    if (err == cudaSuccess) err = launch_chain_inputs(ip, s);
  }
  // Without CP, the wgmma chain's CTAs (one per SM) walk whole sequences and leave SMs idle
  // whenever there are fewer of them than SMs: the local kernel then runs beside the chain on
  // those SMs, each unit waiting for its chunk's counts (ChainParams::ready), and takes the
  // others as chain CTAs finish.
  const int64_t chain_ctas = d.num_seqs * d.Hv * int64_t(kV / std::max(c.block_v, 1));
  const bool local_beside =
      cp == 0 && c.roles == WarpRoles::ColumnWarps && d.max_chunks > 0 && chain_ctas < sms;
  if (local_beside && err == cudaSuccess) {
    err = cudaMemsetAsync(w.ready, 0, w.ready_bytes, s);
    cp_params.ready = w.ready;
  }
  if (cp == 0) {
    if (!fused_kernel && err == cudaSuccess)
      err = launch_dstate_chain(cp_params, c.roles, c.block_v, d.num_seqs, s);
  } else {
    // Exact CP, mirrored: pass 1 per segment (unless it ran beside the recompute), the fix-up
    // over the segments in reverse order, then every segment from its end-state gradient
    // (bwd_params.cuh). The recompute ran in the same segments (the config's), so its pass 1
    // left each segment's forward M in transfer; the reverse chain's M is its transpose, and
    // pass 1 runs the N columns only.
    cp_params.transition = true;
    if (!pass1_first && err == cudaSuccess)
      err = launch_dstate_chain(cp_params, chain_roles, chain_bv, w.cp_bufs.max_segs, s);
    // The forward's M: the recompute's pass 1 left it in transfer, or the training forward's
    // pass 1 in the saved block (transfer then holds only this pass 1's N columns).
    if (err == cudaSuccess)
      err = fused::launch_cp_fixup(d, w.cp_bufs.seg_first, w.cp_bufs.transfer, w.cp_bufs.max_segs,
                                   w.cp_bufs.starts, plan.fixup_cols,
                                   fused::TransferM::ForwardTransposed, s,
                                   saved_starts ? sv.cp_bufs.transfer : nullptr);
    cp_params.transition = false;
    if (!fused_kernel && err == cudaSuccess)
      err = launch_dstate_chain(cp_params, c.roles, c.block_v, w.cp_bufs.max_segs, s);
  }

  if (fused_kernel) {
    // 2'. The fused kernel per (sequence or segment, v-head): the chain's outputs pass and the
    //     local gradients; dq, dk per value head unless one value head serves each q/k head.
    FusedBwdParams fb{};
    fb.c = cp_params;
    fb.tmap_v = fp.tmap_v;
    fb.dq = a.dq;
    fb.dk = a.dk;
    fb.dq_h = w.dq_h;
    fb.dk_h = w.dk_h;
    fb.dg = a.dg;
    fb.dbeta = a.dbeta;
    const int64_t items = cp > 0 ? w.cp_bufs.max_segs : d.num_seqs;
    // The group sum beside the kernel (the plan's group_sum_beside): the kernel publishes each
    // chunk's parts in the counts (w.ready; the grid's queue after them), zeroed first. Its
    // queue walks every item's chunks up to the segment length (CP) or the chunk table's size.
    GroupSumBesideParams gs{};
    gs.d = d;
    gs.segs = cp > 0 ? w.cp_bufs.segs : nullptr;
    gs.chunk_first = w.chunk_first;
    gs.table = w.table;
    gs.items = items;
    gs.max_item_chunks = cp > 0 ? cp : d.max_chunks;
    gs.published = w.ready;
    gs.queue = w.queue;
    gs.dq_h = w.dq_h;
    gs.dk_h = w.dk_h;
    gs.dq = a.dq;
    gs.dk = a.dk;
    // (Only with a fused grid to publish the chunks: the grid beside would wait for them.)
    const bool sum_beside = plan.group_sum_beside && d.group > 1 && d.Ttot > 0 && items > 0 &&
                            group_sum_beside_fits(gs, plan.group_sum_ctas);
    if (sum_beside && err == cudaSuccess) {
      err = cudaMemsetAsync(w.ready, 0, w.ready_bytes, s);
      fb.published = w.ready;
    }
    if (err == cudaSuccess && d.Ttot > 0) {
      err = fused::encode_rows16_map(&fb.tmap_s, w.states16, d.max_chunks * d.Hv * kV, kK, kV, d.in_bf16);
      if (err == cudaSuccess) err = launch_fused_bwd(fb, items, s);
    } else if (err == cudaSuccess) {
      // No token: nothing to load (the TMA views cannot be formed over empty tensors), and dh0
      // is each sequence's dht; the column-warp chain writes it as it does for its variants.
      err = launch_dstate_chain(cp_params, chain_roles, chain_bv, items, s);
    }
    if (sum_beside && err == cudaSuccess) {
      err = launch_group_sum_beside(gs, plan.group_sum_ctas, s);
    } else if (d.group > 1 && err == cudaSuccess) {
      err = launch_dq_dk_group_sum(d, 1, true, a, w, s);
    }
    if (err == cudaSuccess) err = launch_short_chunk_repair(short_chunk_params(d, a, w), s);
    return err == cudaSuccess ? GDN_OK : GDN_ERROR_CUDA;
  }

  // 3. Local gradients per (chunk, group of the plan's local_heads value heads).
  LocalParams lp{};
  lp.d = d;
  lp.heads_per_cta = plan.local_heads;
  lp.chunk_first = w.chunk_first;
  lp.h0 = a.h0;
  lp.dht = a.dht;
  lp.dq = a.dq;
  lp.dk = a.dk;
  lp.q = a.q;
  lp.k = a.k;
  lp.v = a.v;
  lp.d_o = a.d_o;
  lp.dv = a.dv;
  lp.beta = a.beta;
  lp.table = w.table;
  lp.gcum = w.gcum;
  lp.t16 = w.t16_rows;
  lp.states16 = w.states16;
  lp.dstate16 = w.dstate16;
  lp.dvnew16 = w.dvnew16;
  lp.dq_h = w.dq_h;
  lp.dk_h = w.dk_h;
  lp.dg = a.dg;
  lp.dbeta = a.dbeta;
  if (local_beside) {
    lp.ready = w.ready;
    lp.ready_target = kV / c.block_v;  // the chain's V-blocks per (chunk, v-head)
    lp.queue = w.queue;
  }
  if (err == cudaSuccess) err = launch_local_grads(lp, s);

  // 4. Unless a CTA walked a whole group: dq, dk summed over each q/k head's partial sums (one
  //    per local_heads value heads), in a fixed order.
  if (plan.local_heads < d.group) {
    if (err == cudaSuccess) err = launch_dq_dk_group_sum(d, plan.local_heads, false, a, w, s);
  }

  // 5. A sequence's short last chunk again in fp32, from the caller's dht (and h0), over the
  //    16-bit outputs there (short_chunk.cuh).
  if (err == cudaSuccess) err = launch_short_chunk_repair(short_chunk_params(d, a, w), s);
  return err == cudaSuccess ? GDN_OK : GDN_ERROR_CUDA;
}

}  // namespace gdn::bwd
