/* libgdn context parallelism across ranks: one long (or packed) sequence split over R ranks
 * (GPUs), each holding a contiguous run of its tokens. docs/context_parallel.md has the
 * algorithm, the usage from C and from PyTorch and the bytes exchanged.
 *
 * The recurrence is affine in the state, so a rank's run of tokens maps its start state h to
 * M h + N (M: K x K per value head, N: the end state from a zero start). Each rank
 *   1. gdn_cp_fwd_begin: computes its carry (M, N) of the sequence that continues on the next
 *      rank (and its final outputs already when its start state is known);
 *   2. exchanges the carries with the other ranks (all-gather: O(R K^2) bytes per head, never
 *      tokens) - the caller does this with its own communicator (NCCL, MPI, ...);
 *   3. gdn_cp_fwd_chain: chains the carries of the ranks before it into its true start state;
 *   4. gdn_cp_fwd_end: produces its outputs from that start state.
 * The backward mirrors it: gdn_cp_bwd_begin gives the state gradient at the rank's first token
 * (its carry), the ranks all-gather those, gdn_cp_bwd_chain chains the carries of the ranks
 * after it back through their transitions into the gradient at the rank's last token, and
 * gdn_cp_bwd_end produces the gradients. Results equal the single-GPU call on the whole
 * sequence up to summation order.
 *
 * Every call validates its arguments first (the message is in gdn_last_error()), runs on the
 * given stream and never synchronises with the host. Scratch memory is allocated in stream
 * order (cudaMallocAsync), so the calls can be captured in a CUDA graph. Training mode
 * (gdn_saved: a->save, a->saved) is a whole call's, so these calls refuse it
 * (GDN_ERROR_UNSUPPORTED) rather than write a block laid out for one of their pieces.
 */
#ifndef GDN_GDN_CP_H
#define GDN_GDN_CP_H

#include "gdn/gdn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where one rank stands in the split; gdn_cp_plan fills it from the global offsets. */
typedef struct gdn_cp_rank_plan {
  int32_t rank;            /* 0 .. num_ranks-1 */
  int32_t num_ranks;       /* R */
  int64_t token_begin;     /* this rank's tokens are [token_begin, token_end) of the whole */
  int64_t token_end;
  int64_t first_seq;       /* global index of the rank's first local sequence (piece) */
  int64_t num_local_seqs;  /* pieces on this rank: the local problem's num_seqs */
  int32_t head_continues;  /* 1: the first piece began on an earlier rank (start state unknown) */
  int32_t tail_continues;  /* 1: the last piece goes on on the next rank (end state is a carry) */
  /* The forward chain of this rank's start state: carries of ranks
   * [fwd_chain_first, fwd_chain_first + fwd_chain_count); count 0 when !head_continues. */
  int32_t fwd_chain_first;
  int32_t fwd_chain_count;
  /* The backward chain of the state gradient at this rank's last token: carries of ranks
   * [bwd_chain_first, bwd_chain_first + bwd_chain_count); count 0 when !tail_continues. */
  int32_t bwd_chain_first;
  int32_t bwd_chain_count;
} gdn_cp_rank_plan;

/* Plans rank `rank` of `num_ranks` on the host (no device use).
 *   cu_seqlens_host: the global offsets, [num_seqs + 1] int64, 0 .. T, non-decreasing; NULL for
 *                    one sequence of T = rank_offsets[num_ranks] tokens (num_seqs must be 1).
 *   rank_offsets:    [num_ranks + 1] int64, strictly increasing from 0 to T: rank r holds the
 *                    tokens [rank_offsets[r], rank_offsets[r+1]) (every rank at least one).
 *   local_cu_seqlens_host: optional, capacity entries: receives the rank's local offsets
 *                    ([num_local_seqs + 1], from 0 to its token count); a smaller capacity is
 *                    an error naming the size needed (num_seqs + 1 always suffices).
 * A zero-length sequence belongs to the rank whose token range holds its offset (the last rank
 * for offset T). */
GDN_API gdn_status gdn_cp_plan(const int64_t* cu_seqlens_host, int64_t num_seqs,
                               const int64_t* rank_offsets, int32_t num_ranks, int32_t rank,
                               gdn_cp_rank_plan* plan, int64_t* local_cu_seqlens_host,
                               int64_t capacity);

/* Bytes of one rank's forward carry, Hv * K * (K + V) * 4: the transition [Hv, K, K] then the
 * state [Hv, K, V] (the problem's state layout), fp32; and of its backward carry, the state
 * gradient [Hv, K, V]: Hv * K * V * 4. 0 with the message set when the problem is invalid.
 * An all-gather of the carries moves (R - 1) times these bytes into each rank. */
GDN_API size_t gdn_cp_fwd_carry_bytes(const gdn_problem* p);
GDN_API size_t gdn_cp_bwd_carry_bytes(const gdn_problem* p);

/* The local problem `p` describes the rank's tokens alone: B = 1, T = token_end - token_begin,
 * num_seqs = plan->num_local_seqs, cu_seqlens (device) and cu_seqlens_host the local offsets
 * (both required when there is more than one piece; NULL allowed for one). Tensors in the args
 * are the rank's slices; a->h0 / a->ht / a->dht / a->dh0 are [num_local_seqs, Hv, K, V] (the
 * global arrays' rows first_seq .. first_seq + num_local_seqs - 1). Rows that belong to another
 * rank are never read or written: h0 and dh0 of the first piece when head_continues, ht and
 * dht of the last piece when tail_continues. Transitions need K == V. The outputs are final
 * after the matching *_end call (earlier they may hold scratch values). a->workspace is not
 * used: the inner calls allocate theirs in stream order.
 *
 * gdn_cp_fwd_begin writes `carry` (gdn_cp_fwd_carry_bytes, 16-byte aligned) when
 * tail_continues: its state always, its transition only when the rank is one piece continuing
 * on both sides (the only case where a later rank reads it). NULL is accepted when the tail
 * does not continue. When the rank's start state is known (!head_continues) it also writes
 * every output: gdn_cp_fwd_end is then a no-op. */
GDN_API gdn_status gdn_cp_fwd_begin(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                    const gdn_fwd_args* a, float* carry, gdn_stream_t stream);

/* The start state [Hv, K, V] of a rank whose head continues, from `count` forward carries
 * (those of ranks fwd_chain_first .. fwd_chain_first + count - 1, consecutive in `carries`,
 * e.g. rows of an all-gathered [R, carry] buffer): h = state_0, then
 * h = transition_i h + state_i for i = 1 .. count-1. */
GDN_API gdn_status gdn_cp_fwd_chain(const gdn_problem* p, const float* carries, int32_t count,
                                    float* start_state, gdn_stream_t stream);

/* The rank's outputs o (and ht rows of the pieces that end here) from its start state
 * (required when head_continues, else ignored). A no-op when !head_continues. */
GDN_API gdn_status gdn_cp_fwd_end(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                  const gdn_fwd_args* a, const float* start_state,
                                  gdn_stream_t stream);

/* The backward's first part. When head_continues, writes `dcarry` (gdn_cp_bwd_carry_bytes):
 * the gradient of the rank's start state. When the tail does not continue, also writes every
 * gradient (gdn_cp_bwd_end is then a no-op). start_state: as given to gdn_cp_fwd_end. */
GDN_API gdn_status gdn_cp_bwd_begin(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                    const gdn_bwd_args* a, const float* start_state,
                                    float* dcarry, gdn_stream_t stream);

/* The state gradient [Hv, K, V] at the last token of a rank whose tail continues, from the
 * `count` backward carries of ranks bwd_chain_first .. bwd_chain_first + count - 1
 * (consecutive in `dcarries`) and the forward carries of the same ranks (consecutive in
 * `carries`; only their transitions are read, the last one's not at all):
 * d = dstate_{count-1}, then d = transition_i^T d + dstate_i for i = count-2 down to 0. */
GDN_API gdn_status gdn_cp_bwd_chain(const gdn_problem* p, const float* carries,
                                    const float* dcarries, int32_t count, float* end_dstate,
                                    gdn_stream_t stream);

/* The gradients of a rank whose tail continues, from end_dstate (required then); a no-op when
 * the tail does not continue. start_state: as given to gdn_cp_fwd_end. */
GDN_API gdn_status gdn_cp_bwd_end(const gdn_problem* p, const gdn_cp_rank_plan* plan,
                                  const gdn_bwd_args* a, const float* start_state,
                                  const float* end_dstate, gdn_stream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GDN_GDN_CP_H */
