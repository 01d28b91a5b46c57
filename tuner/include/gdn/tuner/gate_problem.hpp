// The correctness gate runs once per (variant, problem family): a family is everything that
// changes which code path a kernel takes except the sequence layout (heads, head dims, dtype).
// Its representative is small enough for the float64 CPU reference yet covers the awkward
// cases: two packed sequences, neither a multiple of the 64-token chunk.
#pragma once

#include <string>

#include "gdn/db/records.hpp"

namespace gdn::tuner {

std::string family_key(const db::ProblemRecord& p);  // "hqk=4 hv=16 k=128 v=128 bf16"

inline constexpr const char* kGateSeqlens = "130,67";
// Same family as p, sequences kGateSeqlens, shape set "gate".
db::ProblemRecord gate_problem(const db::ProblemRecord& p);

}  // namespace gdn::tuner
