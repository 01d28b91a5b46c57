// The staged family as type-erased variants: one object per (pass, KernelConfig).
#pragma once

#include <memory>

#include "gdn/variant.hpp"

namespace gdn::staged {

// block_v values each pass compiles: the backward's dS recurrence keeps Q, K, dS and four
// 64-row tiles in shared memory, which does not fit for a 128-column V-block.
inline constexpr int kForwardBlockV[] = {32, 64, 128};
inline constexpr int kBackwardBlockV[] = {32, 64};

std::unique_ptr<Variant> make_staged_variant(Pass pass, const KernelConfig& config);

}  // namespace gdn::staged
