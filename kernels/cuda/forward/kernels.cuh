// Launchers of the fused family's kernels. Every launcher enqueues on the given stream only,
// never synchronises, and returns the launch error.
#pragma once

#include "forward/params.cuh"
#include "training/saved_buffers.cuh"

namespace gdn::fused {

// The chunk loop over grid (items, Hv, col_blocks); items = sequences (no CP) or segment table
// entries. Defined for BV = 32 and 64 (forward/chunk_loop_coop_v32.cu,
// forward/chunk_loop_coop_v64.cu).
template <int BV>
cudaError_t launch_chunk_loop(const FusedParams& p, unsigned items, unsigned col_blocks,
                              cudaStream_t stream);
// Kernel entry point (for cudaFuncGetAttributes) of the bf16 or fp16 instantiation.
template <int BV>
const void* chunk_loop_symbol(bool bf16);

// The producer/consumer chunk loop (Output mode only) over grid (items, Hv, V / BV), 256
// threads: forward/chunk_loop_pc_v32.cu, forward/chunk_loop_pc_v64.cu.
template <int BV>
cudaError_t launch_chunk_loop_pc(const FusedParams& p, unsigned items, cudaStream_t stream);
template <int BV>
const void* chunk_loop_pc_symbol(bool bf16);

// The column-warp chunk loop, both modes (Output; Transition: CP pass 1 over the [M | N]
// columns), one flat grid of items x Hv x (state columns / BV) CTAs of BV / 16 warps:
// forward/chunk_loop_cw_v64.cu, forward/chunk_loop_cw_v128.cu. Reads the prepare kernel's
// scores16 and gate_ef besides t16 (lower_packed16), and q, k, v through p's tensor maps.
template <int BV>
cudaError_t launch_chunk_loop_cw(const FusedParams& p, unsigned items, cudaStream_t stream);
template <int BV>
const void* chunk_loop_cw_symbol(bool bf16);

// Exact context parallelism (cp/fixup.cu).
// Segment table: sequence n gets max(1, ceil(chunks_n / seg_chunks)) segments of at most
// seg_chunks chunks; seg_first [N + 1] is their scan, segs [max_segs] the entries (unused
// tail entries have flags == 0). Built on the device from chunk_first.
cudaError_t build_segment_table(const Dims& d, int seg_chunks, const int64_t* chunk_first,
                                int64_t* seg_first, Segment* segs, int64_t max_segs,
                                cudaStream_t stream);
// The chunk table (ready zeroed when given) and, when seg_chunks > 0, the segment table, as
// staged::build_chunk_table and build_segment_table build them: in one launch (one block)
// when tables_fit_one_block and the path is Auto, else with those builders (up to four
// launches; PerTable forces them, for the test that compares the two).
enum class TablesPath { Auto, PerTable };
bool tables_fit_one_block(int64_t max_chunks, int seg_chunks, int64_t max_segs);
// Within the one-block path, the one-warp builder's share: at most 32 sequences and 2048
// chunks (and segments).
bool tables_fit_one_warp(int64_t num_seqs, int64_t max_chunks, int seg_chunks, int64_t max_segs);
cudaError_t build_tables(const gdn_problem& p, const Dims& d, int seg_chunks,
                         int64_t* chunk_first, ChunkInfo* table, int* ready, int64_t* seg_first,
                         Segment* segs, int64_t max_segs, cudaStream_t stream,
                         TablesPath path = TablesPath::Auto);
// Where the fix-up finds each step's M.
enum class TransferM {
  // M_i in transfer slot i, as the pass 1 before it left it.
  Stored,
  // The backward's chain (its pass 1 runs the N columns only): the reverse chain is the
  // adjoint of the forward recurrence, so a segment's M is the transpose of the forward's,
  // which the recompute's pass 1 left in the M columns of the segment's own slot; the
  // backward's slot i (reversed within the sequence) is forward slot first + last - 1 - i.
  ForwardTransposed,
};

// Fix-up: per (sequence, v-head, block of fixup_cols columns), h_1 = N_0 (pass 1 started the
// first segment's N at h0) and h_{i+1} = M_i h_i + N_i over the sequence's later segments,
// writing starts[i + 1] (KV layout, fp32); transfer holds max_segs segments' [M | N] (M as
// m says). cols: state columns per CTA, 8, 16 or 32 (the launch plan's fixup_cols).
// m_transfer: where the M columns are read, in transfer's layout (nullptr: transfer itself);
// the backward reads the forward's M from a training forward's saved block, which it never
// writes.
cudaError_t launch_cp_fixup(const Dims& d, const int64_t* seg_first, const float* transfer,
                            int64_t max_segs, float* starts, int cols, TransferM m,
                            cudaStream_t stream, const float* m_transfer = nullptr);

}  // namespace gdn::fused
