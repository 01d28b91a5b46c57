// A loaded problem as the C API describes it: a gdn_problem plus the host copy of cu_seqlens
// it points to. The device copy is the caller's: upload cu_seqlens_host() and set
// problem.cu_seqlens before calling gdn_fwd / gdn_bwd.
#pragma once

#include <cstdint>
#include <vector>

#include "gdn/gdn.h"
#include "gdn/problems/shape_set.hpp"

namespace gdn::problems {

class ApiProblem {
 public:
  ApiProblem(const Problem& source, gdn_index_dtype index_dtype, gdn_state_layout layout);
  // problem.cu_seqlens_host points into this object: copying would leave it pointing at the
  // original, so only moves (which keep the vectors' buffers) are allowed.
  ApiProblem(const ApiProblem&) = delete;
  ApiProblem& operator=(const ApiProblem&) = delete;
  ApiProblem(ApiProblem&&) = default;
  ApiProblem& operator=(ApiProblem&&) = default;

  gdn_problem problem{};  // cu_seqlens (device) is NULL: set it after uploading
  const void* cu_seqlens_host() const { return problem.cu_seqlens_host; }  // NULL if batched
  std::size_t cu_seqlens_bytes() const;  // bytes to upload (0 if batched)

 private:
  std::vector<std::int32_t> offsets32_;
  std::vector<std::int64_t> offsets64_;
};

// Defaults: int32 offsets when they fit (int64 otherwise), state layout [N, Hv, K, V].
// The explicit overload uses the index dtype given, even one gdn_validate_problem rejects.
ApiProblem to_api_problem(const Problem& source);
ApiProblem to_api_problem(const Problem& source, gdn_index_dtype index_dtype,
                          gdn_state_layout layout);

}  // namespace gdn::problems
