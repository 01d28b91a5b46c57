/* Prints the size and field offsets of the C API structs, one "struct field offset" line each
 * ("struct sizeof N" for the size), so the Python ctypes mirror can be checked against the
 * compiler's layout of kernels/include/gdn/gdn.h and gdn_cp.h (tests/python/test_binding_cpu.py). */
#include <stddef.h>
#include <stdio.h>

#include "gdn/gdn.h"
#include "gdn/gdn_cp.h"

#define FIELD(S, F) printf("%s %s %zu\n", #S, #F, offsetof(S, F))
#define SIZE(S) printf("%s sizeof %zu\n", #S, sizeof(S))

int main(void) {
  SIZE(gdn_problem);
  FIELD(gdn_problem, B);
  FIELD(gdn_problem, T);
  FIELD(gdn_problem, num_seqs);
  FIELD(gdn_problem, cu_seqlens);
  FIELD(gdn_problem, cu_seqlens_host);
  FIELD(gdn_problem, cu_seqlens_dtype);
  FIELD(gdn_problem, max_seqlen_hint);
  FIELD(gdn_problem, Hk);
  FIELD(gdn_problem, Hv);
  FIELD(gdn_problem, K);
  FIELD(gdn_problem, V);
  FIELD(gdn_problem, qkv_dtype);
  FIELD(gdn_problem, beta_dtype);
  FIELD(gdn_problem, scale);
  FIELD(gdn_problem, state_layout);
  SIZE(gdn_fwd_args);
  FIELD(gdn_fwd_args, q);
  FIELD(gdn_fwd_args, k);
  FIELD(gdn_fwd_args, v);
  FIELD(gdn_fwd_args, g);
  FIELD(gdn_fwd_args, beta);
  FIELD(gdn_fwd_args, h0);
  FIELD(gdn_fwd_args, o);
  FIELD(gdn_fwd_args, ht);
  FIELD(gdn_fwd_args, workspace);
  FIELD(gdn_fwd_args, workspace_bytes);
  FIELD(gdn_fwd_args, launch);
  FIELD(gdn_fwd_args, save);
  SIZE(gdn_bwd_args);
  FIELD(gdn_bwd_args, q);
  FIELD(gdn_bwd_args, k);
  FIELD(gdn_bwd_args, v);
  FIELD(gdn_bwd_args, g);
  FIELD(gdn_bwd_args, beta);
  FIELD(gdn_bwd_args, h0);
  FIELD(gdn_bwd_args, d_o);
  FIELD(gdn_bwd_args, dht);
  FIELD(gdn_bwd_args, dq);
  FIELD(gdn_bwd_args, dk);
  FIELD(gdn_bwd_args, dv);
  FIELD(gdn_bwd_args, dg);
  FIELD(gdn_bwd_args, dbeta);
  FIELD(gdn_bwd_args, dh0);
  FIELD(gdn_bwd_args, workspace);
  FIELD(gdn_bwd_args, workspace_bytes);
  FIELD(gdn_bwd_args, launch);
  FIELD(gdn_bwd_args, saved);
  SIZE(gdn_saved);
  FIELD(gdn_saved, data);
  FIELD(gdn_saved, bytes);
  FIELD(gdn_saved, segment_chunks);
  SIZE(gdn_cp_rank_plan);
  FIELD(gdn_cp_rank_plan, rank);
  FIELD(gdn_cp_rank_plan, num_ranks);
  FIELD(gdn_cp_rank_plan, token_begin);
  FIELD(gdn_cp_rank_plan, token_end);
  FIELD(gdn_cp_rank_plan, first_seq);
  FIELD(gdn_cp_rank_plan, num_local_seqs);
  FIELD(gdn_cp_rank_plan, head_continues);
  FIELD(gdn_cp_rank_plan, tail_continues);
  FIELD(gdn_cp_rank_plan, fwd_chain_first);
  FIELD(gdn_cp_rank_plan, fwd_chain_count);
  FIELD(gdn_cp_rank_plan, bwd_chain_first);
  FIELD(gdn_cp_rank_plan, bwd_chain_count);
  return 0;
}
