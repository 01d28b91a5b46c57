// Escaping for generated C++ (see cpp_source.hpp).
#include "gdn/text/cpp_source.hpp"

#include <fmt/format.h>

namespace gdn::text {

std::string cpp_string_literal(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += static_cast<char>(byte);
    } else if (byte < 0x20 || byte >= 0x7f || byte == '?') {
      // Octal escapes take at most three digits, so a following digit cannot extend them;
      // '?' is escaped so no "??x" sequence reads as a trigraph in older dialects.
      out += fmt::format("\\{:03o}", byte);
    } else {
      out += static_cast<char>(byte);
    }
  }
  return out + "\"";
}

std::string cpp_comment_value(std::string_view text) { return cpp_string_literal(text); }

}  // namespace gdn::text
