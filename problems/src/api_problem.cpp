// Problem -> gdn_problem (+ host cu_seqlens).
#include "gdn/problems/api_problem.hpp"

#include <limits>

namespace gdn::problems {

ApiProblem::ApiProblem(const Problem& source, gdn_index_dtype index_dtype,
                       gdn_state_layout layout) {
  gdn_problem_init(&problem, source.batch(), source.tokens_per_row(), source.h_qk, source.h_v,
                   source.k, source.v);
  problem.qkv_dtype = source.dtype;
  problem.state_layout = layout;
  problem.max_seqlen_hint = source.max_seqlen();
  if (source.layout == Layout::Batched) return;
  problem.num_seqs = source.num_seqs();
  problem.cu_seqlens_dtype = index_dtype;
  const std::vector<std::int64_t> offsets = source.cu_seqlens();
  if (index_dtype == GDN_INT32) {
    // Offsets past int32 wrap here; validation rejects int32 for such a T before reading them.
    offsets32_.assign(offsets.begin(), offsets.end());
    problem.cu_seqlens_host = offsets32_.data();
  } else {
    offsets64_ = offsets;
    problem.cu_seqlens_host = offsets64_.data();
  }
}

std::size_t ApiProblem::cu_seqlens_bytes() const {
  if (problem.cu_seqlens_host == nullptr) return 0;
  return offsets32_.size() * sizeof(std::int32_t) + offsets64_.size() * sizeof(std::int64_t);
}

ApiProblem to_api_problem(const Problem& source, gdn_index_dtype index_dtype,
                          gdn_state_layout layout) {
  return ApiProblem(source, index_dtype, layout);
}

ApiProblem to_api_problem(const Problem& source) {
  // int32 offsets (what most callers pass) unless they cannot address the last token.
  const bool fits_int32 = source.total_tokens() <= std::numeric_limits<std::int32_t>::max();
  return ApiProblem(source, fits_int32 ? GDN_INT32 : GDN_INT64, GDN_STATE_KV);
}

}  // namespace gdn::problems
