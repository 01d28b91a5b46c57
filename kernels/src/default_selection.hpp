// Internal: the default variant selection rule, used when no tuned dispatch table decides.
#pragma once

#include <cstdint>
#include <span>

#include "gdn/variant.hpp"
#include "internal_api.hpp"

namespace gdn::detail {

// Everything the rule may look at: host-side facts only, never device memory.
struct SelectionInput {
  int64_t num_seqs = 0;  // N
  int64_t longest = 0;   // longest sequence (exact, from the host copy or hint, or T as a bound)
  int64_t tokens = 0;    // all sequences together (B * T); 0: unknown, num_seqs x longest is used
  int32_t Hv = 0;        // value heads: one recurrence chain per (sequence, value head)
  int32_t V = 0;         // value head dim, split into V / block_v blocks
  int sm_count = 0;      // streaming multiprocessors of the device
};

// Picks one of `implementable` (non-empty, every entry able to implement the problem, in
// registry order). Deterministic: the same input always gives the same variant.
GDN_INTERNAL_API const Variant* select_default_variant(
    const SelectionInput& in, std::span<const Variant* const> implementable);

}  // namespace gdn::detail
