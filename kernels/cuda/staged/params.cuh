// Kernel parameter blocks of the staged family and the workspace tensors they share.
// Workspace tensors (all fp32 unless noted; max_chunks = table size, Ttot = B * T):
//   chunk_first [N + 1] int64, table [max_chunks] ChunkInfo
//   gcum   [Ttot, Hv]                chunk-local cumulative gate gamma
//   tmat   [max_chunks, Hv, 64, 64]  gated inverse T = D A0 D^-1 (lower triangular)
//   t16 [max_chunks, Hv, 64, 64] 16-bit (dtype of q, k, v) T, the A operand of
//                                    the fused kernel's V_new product (fused forward only)
//   scores16 [max_chunks, Hv, 64, 64] 16-bit P = Gam o causal o (Q K^T) (unscaled; the
//                                    column-warp fused loop only)
//   gate_ef [max_chunks, Hv, 3, 64]  e = exp(gamma), f = exp(gamma_last - gamma), beta per chunk row
//                                    (rows past a chunk's end repeat its last gamma; the
//                                    column-warp fused loop only)
//   ready  [max_chunks + kClaimInts] int  prepared v-heads per chunk (fused forward,
//                                    overlapped), then the SM claims of the exclusive overlap
//   states [max_chunks, Hv, K, V]    state at each chunk's start
//   vnew   [Ttot, Hv, V]             V_new = T diag(beta) (V - diag(e) K S)
// backward only:
//   dstate_end [max_chunks, Hv, K, V]  gradient of each chunk's end state
//   dvnew  [Ttot, Hv, V]             gradient of V_new
//   dw     [Ttot, Hv, V]             gradient of W' = V - diag(e) K S (equals dv)
//   dq_h, dk_h [Ttot, Hv, K]         per-value-head dq, dk before the GVA group sum
#pragma once

#include "common/chunk_table.cuh"
#include "common/problem.cuh"

namespace gdn::staged {

// The SM claims of the prepare kernel's exclusive overlap (ChunkWorkspace::claims), zeroed with
// the ready counts (they follow them in one buffer): a state per SM id (0 undecided, then
// kClaimDeciding, kClaimReserved or kClaimWorking), the count of SMs decided so far and the
// next item of the grid's shared work queue. kClaimInts fits one 256-thread block, so that
// the block that zeroes the first ready counts zeroes them too.
inline constexpr int kMaxSmIds = 254;
inline constexpr int kClaimDecided = kMaxSmIds, kClaimNextItem = kMaxSmIds + 1;
inline constexpr int kClaimInts = kMaxSmIds + 2;
inline constexpr int kClaimDeciding = 1, kClaimReserved = 2, kClaimWorking = 3;

struct ChunkWorkspace {
  int64_t* chunk_first = nullptr;
  ChunkInfo* table = nullptr;
  float* gcum = nullptr;
  float* tmat = nullptr;     // fp32 T; nullptr when only t16 is wanted
  uint16_t* t16 = nullptr;  // 16-bit T; nullptr when not wanted
  // A second 16-bit T, always row-major (the backward's kernels, beside a lower-packed t16 for
  // the column-warp recompute); nullptr when not wanted.
  uint16_t* t16_rows = nullptr;
  uint16_t* scores16 = nullptr;  // 16-bit gated causal Q K^T; nullptr when not wanted
  float* gate_ef = nullptr;      // exp gates and beta per chunk row; nullptr when not wanted
  // t16 and scores16 tiles stored lower-packed (fused::LowerPackedTile: the four 16-column
  // slabs of the rows at or below each, 32-byte swizzled, in the first 5120 bytes of each
  // tile's 8192): one linear bulk copy of a tile into shared memory is then the wgmma operands
  // of its four depth steps as it lands (column-warp loop). Else row-major.
  bool lower_packed16 = false;
  // [max_chunks] int, zeroed by build_chunk_table: how many v-heads of each chunk the prepare
  // kernel has finished (it adds a run's heads once its outputs are visible). Set only when
  // the prepare kernel's consumer launches beside it and polls these counts (the column-warp
  // fused loop); nullptr otherwise.
  int* ready = nullptr;
  // With ready set, the exclusive overlap (forward/run.cu): claims = ready + max_chunks, and the
  // first reserved_sms SMs on which a CTA of the grid lands are left to the loop (every CTA
  // that lands there exits at once; the loop's CTAs, launched next and too large to share an
  // SM, then take them alone), while the CTAs on the other SMs take items from a shared queue
  // (claims[kClaimNextItem]). nullptr: every CTA works, items by a fixed stride.
  int* claims = nullptr;
  int reserved_sms = 0;
  // With ready set, the order of the prepare kernel's items: by a chunk's offset within its
  // unit first, then by unit, so that the consumer, which starts every unit (sequence or CP
  // segment) at once and walks it chunk by chunk, finds its chunks prepared in the order it
  // needs them. Unit u spans chunks [order_bounds[u order_stride], order_bounds[u order_stride
  // + 1]) (chunk_first, stride 1; or the CP segment table, stride 3 int64 per Segment; unused
  // units are empty); order_unit_chunks is the longest unit's chunk count, 0 to find it on the
  // device. nullptr: chunk by chunk.
  const int64_t* order_bounds = nullptr;
  int order_stride = 0;
  int64_t order_units = 0;
  int order_unit_chunks = 0;
  // The chunks of the table the prepare kernel runs when not ordered: [chunk_begin,
  // chunk_end), chunk_end < 0 for the table's end. The fused forward splits them around CP
  // pass 1 (forward/run.cu; the launch plan, plan/launch_plan.cpp).
  int64_t chunk_begin = 0;
  int64_t chunk_end = -1;
  // The tail grid of that split (with claims set; ready is not): launched after CP pass 1 as
  // its programmatic dependent, which lets it launch once every pass-1 CTA has started
  // (fused::FusedParams::early_dependents). Its inputs were complete before pass 1 started
  // (pass 1 waited for the first prepare grid, which waited for the tables and the caller's
  // kernels), so it does not wait for the prior grids before its work. Its CTAs become
  // resident at different times (beside pass 1's last wave first, the rest as pass 1 drains),
  // so they take items from the shared queue (claims[kClaimNextItem]); and they wait for pass
  // 1 to complete before they exit, so that the fix-up, which waits for this grid alone, finds
  // both complete.
  bool beside_loop = false;
  float* states = nullptr;
  float* vnew = nullptr;
};

struct FwdParams {
  Dims d;
  const void* q;
  const void* k;
  const void* v;
  const float* g;
  const void* beta;
  const float* h0;  // optional
  void* o;          // optional for the recompute inside the backward (nullptr)
  float* ht;        // optional
  ChunkWorkspace ws;
};

struct BwdParams {
  FwdParams f;      // forward inputs and the recomputed chunk workspace
  const void* d_o;
  const float* dht;  // optional
  void* dq;
  void* dk;
  void* dv;
  float* dg;
  void* dbeta;
  float* dh0;        // optional
  float* dstate_end;
  float* dvnew;
  float* dw;
  float* dq_h;
  float* dk_h;
  // The parts in dq_h, dk_h are in the input dtype (the fused backward's), not fp32.
  bool parts16;
};

// Bump allocator over dynamic shared memory; the same sequence of take() calls on the host
// (with a null base) gives the byte count to launch with.
struct SmemCarver {
  char* base;
  size_t used = 0;
  __host__ __device__ float* take(size_t floats) {
    float* p = reinterpret_cast<float*>(base + used);
    used += ((floats * sizeof(float) + 15) / 16) * 16;
    return p;
  }
};

// Sequential carving of one device workspace buffer (256-byte aligned pieces); with a null
// base it only measures. Shared by the staged and fused host orchestration.
struct WorkspaceCarver {
  static constexpr size_t kAlign = 256;
  char* base;
  size_t used = 0;
  template <class T>
  T* take(int64_t count) {
    T* p = base ? reinterpret_cast<T*>(base + used) : nullptr;
    used += ((static_cast<size_t>(count) * sizeof(T) + kAlign - 1) / kAlign) * kAlign;
    return p;
  }
};

}  // namespace gdn::staged
