// Private to db/src: the few JSON and C++ literal spellings the export and report need.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gdn::db {

std::string json_string(std::string_view text);      // quoted, escaped
std::string json_number(double value);               // shortest round-trip; null if not finite
std::string json_number(const std::optional<double>& value);  // null when absent
std::string cpp_string_literal(std::string_view text);  // quoted, escaped for C++ source
std::string csv_field(std::string_view text);        // quoted only when needed (RFC 4180)

}  // namespace gdn::db
