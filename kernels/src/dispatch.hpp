// Internal: the dispatch decision of one call: validate-free, host-only.
#pragma once

#include <string_view>

#include "gdn/variant.hpp"
#include "validation.hpp"

namespace gdn::detail {

// Chooses the variant for a validated problem on the current device: needs the device (for
// its SM count, read once and cached), never touches device memory. On failure returns the
// status with the message set and leaves *chosen unchanged.
gdn_status choose_variant(Pass pass, const gdn_problem& p, const ProblemFacts& facts,
                          std::string_view where, const Variant** chosen);

}  // namespace gdn::detail
