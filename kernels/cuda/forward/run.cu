// Workspace carving and the launch sequence of the fused forward (see forward/run.cuh).
#include <cstddef>

#include "common/chunk_table.cuh"
#include "forward/kernels.cuh"
#include "forward/run.cuh"
#include "forward/tensor_maps.cuh"
#include "gdn/launch_plan.hpp"
#include "staged/kernels.cuh"
#include "staged/run.cuh"

namespace gdn::fused {

namespace {

struct FusedWorkspace {
  int64_t* chunk_first = nullptr;
  ChunkInfo* table = nullptr;
  float* gcum = nullptr;
  uint16_t* t16 = nullptr;
  // ColumnWarps only
  uint16_t* scores16 = nullptr;
  float* gate_ef = nullptr;
  int* ready = nullptr;
  CpBuffers cp_bufs;  // CP only
};

FusedWorkspace carve(staged::WorkspaceCarver& c, const Dims& d, const KernelConfig& config) {
  const int cp = config.cp_segment_chunks;
  FusedWorkspace w;
  w.chunk_first = c.take<int64_t>(d.num_seqs + 1);
  w.table = c.take<ChunkInfo>(d.max_chunks);
  if (config.roles != WarpRoles::ColumnWarps)  // the column-warp loop reads e, f instead
    w.gcum = c.take<float>(d.Ttot * d.Hv);
  w.t16 = c.take<uint16_t>(d.max_chunks * d.Hv * kC * kC);
  if (config.roles == WarpRoles::ColumnWarps) {
    w.scores16 = c.take<uint16_t>(d.max_chunks * d.Hv * kC * kC);
    w.gate_ef = c.take<float>(d.max_chunks * d.Hv * 3 * kC);
    w.ready = c.take<int>(d.max_chunks + staged::kClaimInts);  // the counts, then the claims
  }
  if (cp > 0) w.cp_bufs = carve_cp(c, d, cp);
  return w;
}

// The column-warp loop runs both passes of its configs (CP pass 1, Transition: no output,
// the state widened to [M | N], in 2 x 128 / block_v V-blocks). The producer/consumer loop
// runs the Output passes of its configs; their CP pass 1 runs the cooperative loop, at most
// 64 columns wide (the widest it is compiled for).
cudaError_t launch_loop(const FusedParams& p, const KernelConfig& c, int64_t items, int state_cols,
                        cudaStream_t s) {
  const auto n = static_cast<unsigned>(items);
  if (c.roles == WarpRoles::ProducerConsumer && p.mode == Mode::Output) {
    switch (c.block_v) {
      case 32: return launch_chunk_loop_pc<32>(p, n, s);
      case 64: return launch_chunk_loop_pc<64>(p, n, s);
      default: return cudaErrorInvalidValue;
    }
  }
  if (c.roles == WarpRoles::ColumnWarps) {  // both passes; pass 1 spans [M | N] itself
    switch (c.block_v) {
      case 64: return launch_chunk_loop_cw<64>(p, n, s);
      case 128: return launch_chunk_loop_cw<128>(p, n, s);
      default: return cudaErrorInvalidValue;
    }
  }
  const int block_v = c.block_v < 64 ? c.block_v : 64;
  switch (block_v) {
    case 32: return launch_chunk_loop<32>(p, n, static_cast<unsigned>(state_cols / 32), s);
    case 64: return launch_chunk_loop<64>(p, n, static_cast<unsigned>(state_cols / 64), s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

size_t chunk_loop_pc_smem_bytes(int block_v) {
  switch (block_v) {
    case 32: return FusedPcSmem<32>::bytes();
    case 64: return FusedPcSmem<64>::bytes();
    default: return 0;
  }
}

size_t chunk_loop_cw_smem_bytes(int block_v) {
  switch (block_v) {
    case 64: return FusedCwSmem<64>::bytes();
    case 128: return FusedCwSmem<128>::bytes();
    default: return 0;
  }
}

size_t chunk_loop_smem_bytes(int block_v, int stages) {
  switch (block_v) {
    case 32: return FusedSmem<32>::bytes(stages);
    case 64: return FusedSmem<64>::bytes(stages);
    default: return 0;
  }
}

size_t fwd_workspace_bytes(const gdn_problem& p, const KernelConfig& c) {
  staged::WorkspaceCarver carver{nullptr};
  carve(carver, staged::make_dims(p), c);
  return carver.used;
}

// The prepare kernel's item order beside the loop (ChunkWorkspace::order_bounds): the loop's
// units are the CP segments (cp chunks at most), else the sequences. Sequences are only
// ordered up to kMaxOrderedSeqs (each prepare CTA scans them once for the longest); past
// that, chunk by chunk.
constexpr int64_t kMaxOrderedSeqs = 4096;
static_assert(sizeof(Segment) == 3 * sizeof(int64_t) && offsetof(Segment, chunk_begin) == 0 &&
                  offsetof(Segment, chunk_end) == sizeof(int64_t),
              "order_bounds reads a segment's chunk range as int64 pairs, three int64 apart");

void set_prepare_order(staged::ChunkWorkspace& ws, const Dims& d, int cp, const FusedWorkspace& w) {
  if (cp > 0) {
    ws.order_bounds = reinterpret_cast<const int64_t*>(w.cp_bufs.segs);
    ws.order_stride = 3;
    ws.order_units = w.cp_bufs.max_segs;
    ws.order_unit_chunks = cp;
  } else if (d.num_seqs <= kMaxOrderedSeqs) {
    ws.order_bounds = w.chunk_first;
    ws.order_stride = 1;
    ws.order_units = d.num_seqs;
    ws.order_unit_chunks = 0;  // found on the device
  }
}

namespace {

// Training mode (gdn_fwd_args::save): the prepare kernel's outputs and, with saved segments,
// the CP buffers move from the workspace into the saved block, where the backward finds them.
// The prepare kernel then writes everything the backward reads (gcum, both layouts of T, the
// gates), and the chunk loop reads its own operands from there.
void use_saved(FusedWorkspace& w, const SavedBuffers& sv) {
  w.gcum = sv.gcum;
  w.gate_ef = sv.gate_ef;
  if (sv.segment_chunks > 0) w.cp_bufs = sv.cp_bufs;
}

}  // namespace

gdn_status run_forward(const gdn_problem& p, const gdn_fwd_args& a, const KernelConfig& config,
                       gdn_stream_t stream) {
  const size_t need = fwd_workspace_bytes(p, config);
  if (a.workspace_bytes < need || (!a.workspace && need > 0)) return GDN_ERROR_WORKSPACE;
  const gdn_saved* const save = a.save;
  if (save && save->bytes < saved_bytes(p, save->segment_chunks)) return GDN_ERROR_WORKSPACE;
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  const Dims d = staged::make_dims(p);
  if (d.num_seqs == 0) return GDN_OK;
  staged::WorkspaceCarver carver{static_cast<char*>(a.workspace)};
  FusedWorkspace w = carve(carver, d, config);
  // In training mode with saved segments the forward's exact CP runs in the saved segments:
  // their start states are then the backward recompute's, and its transitions the M the
  // backward's fix-up reads.
  KernelConfig c = config;
  SavedBuffers sv;
  if (save) {
    staged::WorkspaceCarver saved{static_cast<char*>(save->data)};
    sv = carve_saved(saved, d, save->segment_chunks);
    use_saved(w, sv);
    if (sv.segment_chunks > 0) c.cp_segment_chunks = sv.segment_chunks;
  }

  // Every launch decision below comes from the plan (gdn/launch_plan.hpp), made once per call
  // for the device's SM count, which also sizes the prepare grid and the fix-up.
  const int sms = staged::device_sm_count();
  const ForwardPlan plan = plan_forward(c, plan_shape(p), PlanDevice{sms}, a.launch);
  // The first chunk loop launches beside the prepare kernel (FusedParams::ready) or after it;
  // beside it, exclusive: on SMs the prepare grid leaves to its CTAs, one each.
  int* const ready = plan.prepare_overlap != OverlapMode::None ? w.ready : nullptr;
  const bool exclusive = plan.prepare_overlap == OverlapMode::Exclusive;
  // Or the prepare split around CP pass 1: chunks [0, tail_begin) before it, the rest (the
  // last segment's, read by the main pass alone) beside its last wave (0: no split).
  const int64_t tail_begin = plan.prepare_split_chunk;
  // The segment table depends only on the chunk table: built with it before the prepare
  // kernel, so that CP pass 1 can follow the prepare kernel directly (and launch beside it).
  // The counts and claims are zeroed for either use (the tail's queue is a claim).
  cudaError_t err = build_tables(p, d, c.cp_segment_chunks, w.chunk_first, w.table,
                                 tail_begin > 0 ? w.ready : ready, w.cp_bufs.seg_first,
                                 w.cp_bufs.segs, w.cp_bufs.max_segs, s);
  staged::FwdParams prep{};
  if (err == cudaSuccess && d.max_chunks > 0) {
    prep.d = d;
    prep.q = a.q;
    prep.k = a.k;
    prep.v = a.v;
    prep.g = a.g;
    prep.beta = a.beta;
    prep.ws.chunk_first = w.chunk_first;
    prep.ws.table = w.table;
    prep.ws.gcum = w.gcum;  // nullptr for the column-warp loop: not written
    prep.ws.t16 = w.t16;  // the fp32 T of the staged family is not needed
    prep.ws.scores16 = w.scores16;  // ColumnWarps only (else nullptr: not computed)
    prep.ws.gate_ef = w.gate_ef;
    // The column-warp loop bulk-copies T and P straight into wgmma operand tiles.
    prep.ws.lower_packed16 = c.roles == WarpRoles::ColumnWarps;
    if (save) {  // T in both layouts: lower-packed for the recompute, row-major for the rest
      prep.ws.t16 = sv.t16;
      prep.ws.t16_rows = sv.t16_rows;
      prep.ws.lower_packed16 = true;
    }
    prep.ws.ready = ready;
    if (exclusive) {
      prep.ws.claims = w.ready + d.max_chunks;
      prep.ws.reserved_sms = static_cast<int>(plan.first_loop_ctas);
    }
    if (ready) set_prepare_order(prep.ws, d, c.cp_segment_chunks, w);
    if (tail_begin > 0) prep.ws.chunk_end = tail_begin;
    err = staged::launch_prepare(prep, sms, plan.prepare_heads, s);
  }
  FusedParams fp{};
  fp.d = d;
  fp.q = a.q;
  fp.k = a.k;
  fp.v = a.v;
  fp.beta = a.beta;
  fp.h0 = a.h0;
  fp.o = a.o;
  fp.ht = a.ht;
  fp.chunk_first = w.chunk_first;
  fp.table = w.table;
  fp.gcum = w.gcum;
  fp.t16 = w.t16;
  if (save) fp.t16 = c.roles == WarpRoles::ColumnWarps ? sv.t16 : sv.t16_rows;
  fp.scores16 = w.scores16;
  fp.gate_ef = w.gate_ef;
  fp.stages = c.stages;
  fp.mode = Mode::Output;
  fp.ready = ready;  // the first loop launch only: the next ones follow completed grids
  fp.sm_alone = exclusive;
  if (err == cudaSuccess && c.roles == WarpRoles::ColumnWarps && d.Ttot > 0) {
    err = encode_token_tile_map(&fp.tmap_q, a.q, d.Hk, d.Ttot, d.in_bf16);
    if (err == cudaSuccess) err = encode_token_tile_map(&fp.tmap_k, a.k, d.Hk, d.Ttot, d.in_bf16);
    if (err == cudaSuccess) err = encode_token_tile_map(&fp.tmap_v, a.v, d.Hv, d.Ttot, d.in_bf16);
  }
  if (plan.cp_segment_chunks == 0) {
    if (err == cudaSuccess) err = launch_loop(fp, c, d.num_seqs, kV, s);
    return err == cudaSuccess ? GDN_OK : GDN_ERROR_CUDA;
  }
  fp.segs = w.cp_bufs.segs;
  fp.first_in_pass1 = plan.first_segment_in_pass1;
  fp.transfer = w.cp_bufs.transfer;
  fp.starts = w.cp_bufs.starts;
  fp.mode = Mode::Transition;  // pass 1: [M | N] of every segment but the last
  fp.early_dependents = tail_begin > 0;
  if (err == cudaSuccess) err = launch_loop(fp, c, w.cp_bufs.max_segs, 2 * kV, s);
  fp.early_dependents = false;
  if (err == cudaSuccess && tail_begin > 0) {  // the tail prepare, beside pass 1's last wave
    prep.ws.chunk_begin = tail_begin;
    prep.ws.chunk_end = -1;
    prep.ws.claims = w.ready + d.max_chunks;
    prep.ws.beside_loop = true;
    err = staged::launch_prepare(prep, sms, plan.tail_prepare_heads, s);
  }
  if (err == cudaSuccess)
    err = launch_cp_fixup(d, w.cp_bufs.seg_first, w.cp_bufs.transfer, w.cp_bufs.max_segs,
                          w.cp_bufs.starts, plan.fixup_cols,
                          TransferM::Stored, s);
  fp.mode = Mode::Output;
  // After the fix-up, which completed after pass 1 and so the prepare kernel (and after the
  // tail prepare, which completed after pass 1).
  fp.ready = nullptr;
  fp.sm_alone = false;
  if (err == cudaSuccess) err = launch_loop(fp, c, w.cp_bufs.max_segs, kV, s);
  return err == cudaSuccess ? GDN_OK : GDN_ERROR_CUDA;
}

}  // namespace gdn::fused
