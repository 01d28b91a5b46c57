#include "content_hash.hpp"

#include <cstdio>

namespace gdn::problems {

std::string to_hex(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace gdn::problems
