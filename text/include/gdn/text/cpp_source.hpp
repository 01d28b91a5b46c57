// Text written into generated C++ source (the exported dispatch-table header). Whatever a
// database holds - a newline, a quote, "*/", a backslash, bytes that are not UTF-8 - comes out
// as inert text that compiles to the same characters.
#pragma once

#include <string>
#include <string_view>

namespace gdn::text {

// A C++ string literal: quotes, backslashes, control characters and every byte outside
// printable ASCII escaped (octal), so the literal holds exactly `text`'s bytes.
std::string cpp_string_literal(std::string_view text);

// `text` for a // comment: the same escaping inside double quotes. A quoted, escaped value can
// neither end the comment line (no raw newline) nor splice the next line (it never ends in
// a backslash).
std::string cpp_comment_value(std::string_view text);

}  // namespace gdn::text
