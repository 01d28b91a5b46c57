// Checks of numeric options, in the project's words. CLI11's own range checks print the bounds
// of a double (a 309-digit number for NonNegativeNumber), and its integer conversion saturates
// an oversized value silently; these reject what the option's type cannot hold, naming the range.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

namespace gdn::cli {

// An integer from lo to hi (both included), e.g. the range of the option's C++ type.
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi);

// A finite decimal number (bounds are checked by the option's own validation, which knows them).
CLI::Validator finite_number();

}  // namespace gdn::cli
