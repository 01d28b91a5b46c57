// Inputs drawn as the anchor tables drew theirs (docs/gdn.md section 5), for the CPU reference:
// q, k = l2norm(randn) and v = randn, rounded to bf16; g = logsigmoid(randn) / 16 with g = 0 on
// a random 25% of the value heads; beta = sigmoid(randn); h0 = randn.
#pragma once

#include <cstdint>

#include "gdn/reference.hpp"

namespace gdn::demo {

ref::Inputs anchor_inputs(const ref::Shape& shape, std::uint64_t seed);

}  // namespace gdn::demo
