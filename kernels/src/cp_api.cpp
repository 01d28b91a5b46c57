// The rank-local calls of context parallelism across ranks (gdn_cp.h). Each call is built from
// gdn_fwd / gdn_bwd on the rank's tokens (or on a run of its pieces) and the small chain kernels
// of kernels/cuda/cp_ranks; docs/decisions/cp-across-ranks.md says why, and what it costs.
//
// A rank is one of five cases, by whether its first piece's start state is known (!head) and
// whether its last piece goes on on the next rank (tail):
//   !head, !tail  begin: the whole forward / backward. end: nothing.
//   !head,  tail  forward begin: the whole forward, the last piece's final state is the carry.
//                 backward: end only, with the chained gradient as the last piece's dht.
//    head, !tail  forward: end only, from the chained start. backward begin: everything, the
//                 first piece's dh0 is the carry.
//    head,  tail, several pieces: the last piece runs alone (its start is known; forward begin
//                 and backward end), the others together (forward end and backward begin).
//    head,  tail, one piece: forward begin computes the transition (final state of the
//                 identity with v = 0) and the end state from zero; end runs from the chained
//                 start. Backward begin runs with dht = 0 for the carry, end with the chained
//                 gradient (the only case that runs a pass twice).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "cp_ranks/state_chain.hpp"
#include "device.hpp"
#include "gdn/gdn_cp.h"
#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {
namespace {

// What the calls need to know about the rank's local problem, once validated.
struct RankLayout {
  int64_t tokens = 0;
  int64_t pieces = 0;
  int64_t tail_start = 0;  // the first token of the last piece
  bool head = false;
  bool tail = false;
  int64_t state_floats = 0;  // Hv * K * V: one row of h0 / ht / dht / dh0
  int64_t qk_token_bytes = 0, v_token_bytes = 0, gate_token_bytes = 0, beta_token_bytes = 0;
};

int64_t host_offset(const gdn_problem& p, int64_t i) {
  return p.cu_seqlens_dtype == GDN_INT32 ? static_cast<const int32_t*>(p.cu_seqlens_host)[i]
                                         : static_cast<const int64_t*>(p.cu_seqlens_host)[i];
}

int64_t dtype_size(gdn_dtype d) { return d == GDN_FP32 ? 4 : 2; }

gdn_status check_state_pointer(std::string_view where, const char* name, const void* ptr,
                               std::string_view when) {
  if (ptr == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, name, cat("a device pointer ", when),
                  "NULL");
  if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, name, "a 16-byte aligned pointer",
                  cat("address ", ptr));
  return GDN_OK;
}

// The problem alone, as a CP call needs it: valid, K == V (the transition is computed as a
// final state), and `facts` filled.
gdn_status validate_cp_problem(const gdn_problem* p, std::string_view where, ProblemFacts* f) {
  if (gdn_status s = validate_problem(p, where, f); s != GDN_OK) return s;
  if (p->K != p->V)
    return reject(GDN_ERROR_UNSUPPORTED, where, "p->K",
                  cat("K == V = ", p->V,
                      " for context parallelism across ranks (a rank's K x K transition is "
                      "computed as the final state of the identity)"),
                  cat(p->K));
  return GDN_OK;
}

gdn_status validate_rank(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                         std::string_view where, RankLayout* out) {
  ProblemFacts facts;
  if (gdn_status s = validate_cp_problem(p, where, &facts); s != GDN_OK) return s;
  if (plan == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "plan", "the rank's plan (gdn_cp_plan)",
                  "NULL");
  if (p->B != 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->B",
                  "1 (a rank holds a run of tokens of one batch row; pack sequences with "
                  "cu_seqlens)",
                  cat(p->B));
  if (p->T != plan->token_end - plan->token_begin || p->T < 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->T",
                  cat("the rank's token count plan->token_end - plan->token_begin = ",
                      plan->token_end - plan->token_begin, " (at least 1)"),
                  cat(p->T));
  if (facts.num_seqs != plan->num_local_seqs)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->num_seqs",
                  cat("plan->num_local_seqs = ", plan->num_local_seqs,
                      " (the pieces on this rank)"),
                  cat(facts.num_seqs));
  for (auto [name, flag] : {std::pair{"plan->head_continues", plan->head_continues},
                            std::pair{"plan->tail_continues", plan->tail_continues}})
    if (flag != 0 && flag != 1)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, name, "0 or 1", cat(flag));
  RankLayout r;
  r.tokens = p->T;
  r.pieces = facts.num_seqs;
  r.head = plan->head_continues == 1;
  r.tail = plan->tail_continues == 1;
  if (r.pieces > 1 && p->cu_seqlens_host == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->cu_seqlens_host",
                  cat("the host copy of the local offsets (", r.pieces,
                      " pieces: the calls split them on the host)"),
                  "NULL");
  r.tail_start = r.pieces > 1 ? host_offset(*p, r.pieces - 1) : 0;
  if (r.tail && r.tail_start == r.tokens)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "plan->tail_continues",
                  "0 when the last piece has no token on this rank (a sequence that goes on "
                  "holds the rank's last token)",
                  "1");
  r.state_floats = int64_t{p->Hv} * p->K * p->V;
  r.qk_token_bytes = int64_t{p->Hk} * p->K * dtype_size(p->qkv_dtype);
  r.v_token_bytes = int64_t{p->Hv} * p->V * dtype_size(p->qkv_dtype);
  r.gate_token_bytes = int64_t{p->Hv} * 4;
  r.beta_token_bytes = int64_t{p->Hv} * dtype_size(p->beta_dtype);
  *out = r;
  return GDN_OK;
}

// Sub-problems of the local one: its last piece alone, or its first `pieces` pieces.
gdn_problem last_piece_problem(const gdn_problem& p, const RankLayout& r) {
  gdn_problem sub = p;
  sub.T = r.tokens - r.tail_start;
  sub.num_seqs = 1;
  sub.cu_seqlens = nullptr;
  sub.cu_seqlens_host = nullptr;
  sub.max_seqlen_hint = 0;
  return sub;
}

gdn_problem leading_pieces_problem(const gdn_problem& p, int64_t pieces) {
  gdn_problem sub = p;  // cu_seqlens' first pieces + 1 entries are the sub-problem's offsets
  sub.T = host_offset(p, pieces);
  sub.num_seqs = pieces;
  sub.max_seqlen_hint = 0;
  return sub;
}

template <typename T>
T* offset_bytes(T* ptr, int64_t bytes) {
  if (ptr == nullptr) return nullptr;
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<T*>(reinterpret_cast<Byte*>(const_cast<std::remove_cv_t<T>*>(ptr)) +
                              bytes);
}
template <typename T>
T* state_row(T* states, const RankLayout& r, int64_t row) {
  return states == nullptr ? nullptr : states + row * r.state_floats;
}

// The inputs q, k, v, g, beta (members both argument structs have) from token `t` on.
template <typename Args>
Args inputs_from_token(const Args& a, const RankLayout& r, int64_t t) {
  Args s = a;
  s.q = offset_bytes(a.q, t * r.qk_token_bytes);
  s.k = offset_bytes(a.k, t * r.qk_token_bytes);
  s.v = offset_bytes(a.v, t * r.v_token_bytes);
  s.g = offset_bytes(a.g, t * r.gate_token_bytes);
  s.beta = offset_bytes(a.beta, t * r.beta_token_bytes);
  s.workspace = nullptr;
  s.workspace_bytes = 0;
  return s;
}

// The forward's tensors from token `t` on (the last piece's slice).
gdn_fwd_args fwd_from_token(const gdn_fwd_args& a, const RankLayout& r, int64_t t) {
  gdn_fwd_args s = inputs_from_token(a, r, t);
  s.o = offset_bytes(a.o, t * r.v_token_bytes);
  return s;
}

gdn_bwd_args bwd_from_token(const gdn_bwd_args& a, const RankLayout& r, int64_t t) {
  gdn_bwd_args s = inputs_from_token(a, r, t);
  s.d_o = offset_bytes(a.d_o, t * r.v_token_bytes);
  s.dq = offset_bytes(a.dq, t * r.qk_token_bytes);
  s.dk = offset_bytes(a.dk, t * r.qk_token_bytes);
  s.dv = offset_bytes(a.dv, t * r.v_token_bytes);
  s.dg = offset_bytes(a.dg, t * r.gate_token_bytes);
  s.dbeta = offset_bytes(a.dbeta, t * r.beta_token_bytes);
  return s;
}

// Stream-ordered scratch of one call, returned to the pool after the kernels that use it.
class Scratch {
 public:
  Scratch(std::string_view where, cudaStream_t stream) : where_(where), stream_(stream) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (void* b : buffers_) (void)cudaFreeAsync(b, stream_);
  }
  gdn_status floats(int64_t count, float** out) {
    void* ptr = nullptr;
    const size_t bytes = sizeof(float) * static_cast<size_t>(count);
    if (cudaError_t e = cudaMallocAsync(&ptr, bytes, stream_); e != cudaSuccess)
      return cuda_failure(e, where_, cat("cudaMallocAsync of ", bytes, " scratch bytes"));
    buffers_.push_back(ptr);
    *out = static_cast<float*>(ptr);
    return GDN_OK;
  }
  gdn_status bytes(int64_t count, void** out) {
    float* f = nullptr;
    if (gdn_status s = floats((count + 3) / 4, &f); s != GDN_OK) return s;
    *out = f;
    return GDN_OK;
  }

 private:
  std::string_view where_;
  cudaStream_t stream_;
  std::vector<void*> buffers_;
};

gdn_status copy_rows(std::string_view where, float* dst, const float* src, int64_t rows,
                     const RankLayout& r, cudaStream_t stream) {
  if (rows <= 0 || dst == nullptr) return GDN_OK;
  const size_t bytes = sizeof(float) * static_cast<size_t>(rows * r.state_floats);
  const cudaError_t e = src != nullptr
                            ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)
                            : cudaMemsetAsync(dst, 0, bytes, stream);
  return e == cudaSuccess ? GDN_OK : cuda_failure(e, where, "a state copy");
}

// `rows` state rows: row 0 `first`, the others the caller's rows 1 .. rows-1 (zero when the
// caller gave none): h0 of a rank whose first piece starts from a chained state, or dht of one
// whose last piece ends in a chained gradient (then `first` is the last row; see below).
gdn_status assemble_rows(std::string_view where, Scratch& scratch, const float* given,
                         int64_t rows, int64_t special_row, const float* special,
                         const RankLayout& r, cudaStream_t stream, float** out) {
  if (gdn_status s = scratch.floats(rows * r.state_floats, out); s != GDN_OK) return s;
  if (gdn_status s = copy_rows(where, *out, given, rows, r, stream); s != GDN_OK) return s;
  return copy_rows(where, state_row(*out, r, special_row), special, 1, r, stream);
}

// The run of pieces that starts from the chained state (all but a continuing last piece): its
// problem and its h0 rows, row 0 the chained start and the others the caller's.
struct LeadingRun {
  gdn_problem problem{};
  int64_t pieces = 0;
  float* h0 = nullptr;
};

gdn_status leading_run(std::string_view where, Scratch& scratch, const gdn_problem& p,
                       const RankLayout& r, const float* given_h0, const float* start_state,
                       cudaStream_t stream, LeadingRun* out) {
  out->pieces = r.tail ? r.pieces - 1 : r.pieces;
  out->problem = r.tail ? leading_pieces_problem(p, out->pieces) : p;
  return assemble_rows(where, scratch, given_h0, out->pieces, 0, start_state, r, stream,
                       &out->h0);
}

// What every rank-local call checks first: the problem and plan, then the arguments as
// gdn_fwd / gdn_bwd check them.
// Training mode (gdn_saved) lays a block out for one whole call; a rank's calls run its tokens
// as pieces of other shapes, each of which would lay the block out for itself. Refused (not
// ignored): a block the caller expects written would otherwise hold nothing.
gdn_status refuse_saved(const gdn_fwd_args& a, std::string_view where) {
  if (a.save == nullptr) return GDN_OK;
  return reject(GDN_ERROR_UNSUPPORTED, where, "a->save",
                "NULL (training mode is not available through the gdn_cp_* calls)", "a gdn_saved");
}
gdn_status refuse_saved(const gdn_bwd_args& a, std::string_view where) {
  if (a.saved == nullptr) return GDN_OK;
  return reject(GDN_ERROR_UNSUPPORTED, where, "a->saved",
                "NULL (training mode is not available through the gdn_cp_* calls)", "a gdn_saved");
}

template <typename Args>
gdn_status validate_rank_call(const gdn_problem* p, const gdn_cp_rank_plan* plan, const Args* a,
                              std::string_view where, RankLayout* r) {
  ProblemFacts facts;
  if (gdn_status s = validate_rank(p, plan, where, r); s != GDN_OK) return s;
  if (gdn_status s = validate_call(p, a, where, &facts); s != GDN_OK) return s;
  return refuse_saved(*a, where);
}

gdn_status run_fwd(const gdn_problem& p, const gdn_fwd_args& a, gdn_stream_t stream) {
  gdn_fwd_args call = a;
  call.workspace = nullptr;  // each inner call allocates its own, in stream order
  call.workspace_bytes = 0;
  return gdn_fwd(&p, &call, stream);
}
gdn_status run_bwd(const gdn_problem& p, const gdn_bwd_args& a, gdn_stream_t stream) {
  gdn_bwd_args call = a;
  call.workspace = nullptr;
  call.workspace_bytes = 0;
  return gdn_bwd(&p, &call, stream);
}

gdn_status check_carry(std::string_view where, const char* name, const void* carry,
                       const char* when, bool needed) {
  return needed ? check_state_pointer(where, name, carry, when) : GDN_OK;
}

}  // namespace
}  // namespace gdn::detail

using namespace gdn::detail;

extern "C" size_t gdn_cp_fwd_carry_bytes(const gdn_problem* p) {
  ProblemFacts facts;
  if (validate_cp_problem(p, "gdn_cp_fwd_carry_bytes", &facts) != GDN_OK) return 0;
  return sizeof(float) * static_cast<size_t>(p->Hv) * p->K * (p->K + p->V);
}

extern "C" size_t gdn_cp_bwd_carry_bytes(const gdn_problem* p) {
  ProblemFacts facts;
  if (validate_cp_problem(p, "gdn_cp_bwd_carry_bytes", &facts) != GDN_OK) return 0;
  return sizeof(float) * static_cast<size_t>(p->Hv) * p->K * p->V;
}

extern "C" gdn_status gdn_cp_fwd_begin(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                       const gdn_fwd_args* a, float* carry,
                                       gdn_stream_t stream) {
  constexpr std::string_view where = "gdn_cp_fwd_begin";
  RankLayout r;
  if (gdn_status s = validate_rank_call(p, plan, a, where, &r); s != GDN_OK) return s;
  if (gdn_status s = check_carry(where, "carry", carry, "when plan->tail_continues", r.tail);
      s != GDN_OK)
    return s;
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  const auto cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  float* transition = carry;
  float* state = carry == nullptr ? nullptr : carry + int64_t{p->Hv} * p->K * p->K;

  if (!r.head && !r.tail) return run_fwd(*p, *a, stream);
  if (!r.head) {  // the start is known: the whole forward; the last final state is the carry
    gdn_fwd_args call = *a;
    if (r.pieces == 1) {
      call.ht = state;
      return run_fwd(*p, call, stream);
    }
    Scratch scratch(where, cuda_stream);
    if (gdn_status s = scratch.floats(r.pieces * r.state_floats, &call.ht); s != GDN_OK) return s;
    if (gdn_status s = run_fwd(*p, call, stream); s != GDN_OK) return s;
    if (gdn_status s = copy_rows(where, a->ht, call.ht, r.pieces - 1, r, cuda_stream); s != GDN_OK)
      return s;
    return copy_rows(where, state, state_row(call.ht, r, r.pieces - 1), 1, r, cuda_stream);
  }
  if (!r.tail) return GDN_OK;  // everything waits for the chained start (gdn_cp_fwd_end)
  if (r.pieces > 1) {  // the last piece starts here: run it alone, its final state is the carry
    gdn_fwd_args call = fwd_from_token(*a, r, r.tail_start);
    call.h0 = state_row(a->h0, r, r.pieces - 1);
    call.ht = state;
    return run_fwd(last_piece_problem(*p, r), call, stream);
  }
  // One piece continuing on both sides: the transition is the final state of the identity with
  // v = 0, the state the final state from zero. o is scratch here; gdn_cp_fwd_end rewrites it.
  Scratch scratch(where, cuda_stream);
  void* zero_v = nullptr;
  float* identity = nullptr;
  if (gdn_status s = scratch.bytes(r.tokens * r.v_token_bytes, &zero_v); s != GDN_OK) return s;
  if (gdn_status s = scratch.floats(int64_t{p->Hv} * p->K * p->K, &identity); s != GDN_OK)
    return s;
  if (cudaError_t e = cudaMemsetAsync(zero_v, 0, r.tokens * r.v_token_bytes, cuda_stream);
      e != cudaSuccess)
    return cuda_failure(e, where, "cudaMemsetAsync of the zero values");
  if (cudaError_t e = gdn::cp_ranks::launch_identity_states(identity, p->Hv, p->K, cuda_stream);
      e != cudaSuccess)
    return cuda_failure(e, where, "the identity-state launch");
  gdn_fwd_args call = *a;
  call.v = zero_v;
  call.h0 = identity;
  call.ht = transition;
  if (gdn_status s = run_fwd(*p, call, stream); s != GDN_OK) return s;
  call = *a;
  call.h0 = nullptr;
  call.ht = state;
  return run_fwd(*p, call, stream);
}

extern "C" gdn_status gdn_cp_fwd_end(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                     const gdn_fwd_args* a, const float* start_state,
                                     gdn_stream_t stream) {
  constexpr std::string_view where = "gdn_cp_fwd_end";
  RankLayout r;
  if (gdn_status s = validate_rank_call(p, plan, a, where, &r); s != GDN_OK) return s;
  if (gdn_status s = check_carry(where, "start_state", start_state, "when plan->head_continues",
                                 r.head);
      s != GDN_OK)
    return s;
  if (!r.head) return GDN_OK;  // gdn_cp_fwd_begin wrote everything
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  const auto cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  gdn_fwd_args call = *a;
  if (r.pieces == 1) {
    call.h0 = start_state;
    if (r.tail) call.ht = nullptr;  // the rank's end is a carry, not a final state
    return run_fwd(*p, call, stream);
  }
  // Several pieces: the first starts from the chained state, the others from their own h0.
  // With a continuing tail, the last piece was done by gdn_cp_fwd_begin.
  Scratch scratch(where, cuda_stream);
  LeadingRun run;
  if (gdn_status s = leading_run(where, scratch, *p, r, a->h0, start_state, cuda_stream, &run);
      s != GDN_OK)
    return s;
  call.h0 = run.h0;
  return run_fwd(run.problem, call, stream);
}

extern "C" gdn_status gdn_cp_bwd_begin(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                       const gdn_bwd_args* a, const float* start_state,
                                       float* dcarry, gdn_stream_t stream) {
  constexpr std::string_view where = "gdn_cp_bwd_begin";
  RankLayout r;
  if (gdn_status s = validate_rank_call(p, plan, a, where, &r); s != GDN_OK) return s;
  for (auto [name, ptr] : {std::pair{"start_state", static_cast<const void*>(start_state)},
                           std::pair{"dcarry", static_cast<const void*>(dcarry)}})
    if (gdn_status s = check_carry(where, name, ptr, "when plan->head_continues", r.head);
        s != GDN_OK)
      return s;
  if (r.tail && !r.head) return GDN_OK;  // everything waits for the chained gradient
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  const auto cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  if (!r.head) return run_bwd(*p, *a, stream);

  gdn_bwd_args call = *a;
  if (r.pieces == 1) {  // dh0 of the one piece is the carry
    call.h0 = start_state;
    call.dh0 = dcarry;
    if (r.tail) call.dht = nullptr;  // the chained gradient enters in gdn_cp_bwd_end
    return run_bwd(*p, call, stream);
  }
  // Several pieces: all but a continuing last one, the first from the chained start; its dh0
  // is the carry, the others' go to the caller.
  Scratch scratch(where, cuda_stream);
  LeadingRun run;
  if (gdn_status s = leading_run(where, scratch, *p, r, a->h0, start_state, cuda_stream, &run);
      s != GDN_OK)
    return s;
  call.h0 = run.h0;
  if (gdn_status s = scratch.floats(run.pieces * r.state_floats, &call.dh0); s != GDN_OK)
    return s;
  if (gdn_status s = run_bwd(run.problem, call, stream); s != GDN_OK) return s;
  if (gdn_status s = copy_rows(where, dcarry, call.dh0, 1, r, cuda_stream); s != GDN_OK) return s;
  return copy_rows(where, state_row(a->dh0, r, 1), state_row(call.dh0, r, 1), run.pieces - 1, r,
                   cuda_stream);
}

extern "C" gdn_status gdn_cp_bwd_end(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                     const gdn_bwd_args* a, const float* start_state,
                                     const float* end_dstate, gdn_stream_t stream) {
  constexpr std::string_view where = "gdn_cp_bwd_end";
  RankLayout r;
  if (gdn_status s = validate_rank_call(p, plan, a, where, &r); s != GDN_OK) return s;
  if (gdn_status s = check_carry(where, "start_state", start_state, "when plan->head_continues",
                                 r.head && r.tail);
      s != GDN_OK)
    return s;
  if (gdn_status s = check_carry(where, "end_dstate", end_dstate, "when plan->tail_continues",
                                 r.tail);
      s != GDN_OK)
    return s;
  if (!r.tail) return GDN_OK;  // gdn_cp_bwd_begin wrote everything
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  const auto cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  if (r.head && r.pieces > 1) {  // the last piece alone; its start is its own h0
    gdn_bwd_args call = bwd_from_token(*a, r, r.tail_start);
    call.h0 = state_row(a->h0, r, r.pieces - 1);
    call.dht = end_dstate;
    call.dh0 = state_row(a->dh0, r, r.pieces - 1);
    return run_bwd(last_piece_problem(*p, r), call, stream);
  }
  gdn_bwd_args call = *a;
  if (r.head) {  // one piece continuing on both sides: the whole backward again
    call.h0 = start_state;
    call.dht = end_dstate;
    call.dh0 = nullptr;
    return run_bwd(*p, call, stream);
  }
  if (r.pieces == 1) {
    call.dht = end_dstate;
    return run_bwd(*p, call, stream);
  }
  Scratch scratch(where, cuda_stream);
  float* dht = nullptr;
  if (gdn_status s = assemble_rows(where, scratch, a->dht, r.pieces, r.pieces - 1, end_dstate, r,
                                   cuda_stream, &dht);
      s != GDN_OK)
    return s;
  call.dht = dht;
  return run_bwd(*p, call, stream);
}

namespace gdn::detail {
namespace {

// The forward chain reads the carries' transitions and states; the backward chain their
// transitions and the backward carries (dcarries).
gdn_status run_chain(const gdn_problem* p, const float* carries, const float* dcarries,
                     int32_t count, float* out, bool backward, std::string_view where,
                     gdn_stream_t stream) {
  ProblemFacts facts;
  if (gdn_status s = validate_cp_problem(p, where, &facts); s != GDN_OK) return s;
  if (count < 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "count",
                  "at least 1 carry (the plan's chain count; a rank with count 0 needs no chain)",
                  cat(count));
  if (p->K > 1024)
    return reject(GDN_ERROR_UNSUPPORTED, where, "p->K", "at most 1024 for the chain kernel",
                  cat(p->K));
  const char* out_name = backward ? "end_dstate" : "start_state";
  if (gdn_status s = check_state_pointer(where, "carries", carries, "(device memory)");
      s != GDN_OK)
    return s;
  if (backward)
    if (gdn_status s = check_state_pointer(where, "dcarries", dcarries, "(device memory)");
        s != GDN_OK)
      return s;
  if (gdn_status s = check_state_pointer(where, out_name, out, "(device memory)"); s != GDN_OK)
    return s;
  const int64_t state_floats = int64_t{p->Hv} * p->K * p->V;
  const int64_t carry_floats = int64_t{p->Hv} * p->K * p->K + state_floats;
  const float* adds = backward ? dcarries : carries + int64_t{p->Hv} * p->K * p->K;
  const int64_t add_stride = backward ? state_floats : carry_floats;
  // The output must not overlap what the chain reads.
  const auto overlaps = [&](const float* begin, int64_t floats) {
    return out < begin + floats && begin < out + state_floats;
  };
  if (overlaps(carries, count * carry_floats) ||
      (backward && overlaps(dcarries, count * state_floats)))
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, out_name,
                  "memory apart from the carries it is chained from", "an overlapping pointer");
  if (gdn_status s = require_device(where); s != GDN_OK) return s;
  gdn::cp_ranks::StateChain chain;
  chain.transitions = carries;
  chain.transition_stride = carry_floats;
  chain.adds = adds;
  chain.add_stride = add_stride;
  chain.count = count;
  chain.transpose = backward;
  chain.vk_layout = p->state_layout == GDN_STATE_VK;
  chain.Hv = p->Hv;
  chain.K = p->K;
  chain.V = p->V;
  chain.out = out;
  const auto cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  if (cudaError_t e = gdn::cp_ranks::launch_state_chain(chain, cuda_stream);
      e != cudaSuccess)
    return cuda_failure(e, where, "the chain launch");
  return GDN_OK;
}

}  // namespace
}  // namespace gdn::detail

extern "C" gdn_status gdn_cp_fwd_chain(const gdn_problem* p, const float* carries, int32_t count,
                                       float* start_state, gdn_stream_t stream) {
  return run_chain(p, carries, nullptr, count, start_state, false, "gdn_cp_fwd_chain", stream);
}

extern "C" gdn_status gdn_cp_bwd_chain(const gdn_problem* p, const float* carries,
                                       const float* dcarries, int32_t count, float* end_dstate,
                                       gdn_stream_t stream) {
  return run_chain(p, carries, dcarries, count, end_dstate, true, "gdn_cp_bwd_chain", stream);
}
