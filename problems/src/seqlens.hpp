// The seqlens column: lengths joined by '+', a term L*C meaning C sequences of length L.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gdn::problems {

// Parses `text` into lengths; on failure returns false with `reason` set (naming the term).
bool parse_seqlens(std::string_view text, std::vector<std::int64_t>* lengths,
                   std::string* reason);

// Canonical text: runs of equal lengths as L*C (a run of one as L), joined by '+'.
std::string format_seqlens(const std::vector<std::int64_t>& lengths);

// Strict decimal integer: the whole of `text`, no sign, no spaces, fits int64.
bool parse_count(std::string_view text, std::int64_t* value);

}  // namespace gdn::problems
