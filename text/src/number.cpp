// Number spellings (see number.hpp).
#include "gdn/text/number.hpp"

#include <fmt/format.h>

namespace gdn::text {

std::string shortest(double value) { return fmt::format("{}", value); }

std::string significant(double value, int digits) { return fmt::format("{:.{}g}", value, digits); }

std::string fixed(double value, int decimals) { return fmt::format("{:.{}f}", value, decimals); }

}  // namespace gdn::text
