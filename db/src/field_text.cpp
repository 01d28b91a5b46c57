// JSON and CSV spellings of field values (see field_text.hpp).
#include "field_text.hpp"

#include "gdn/text/number.hpp"

namespace gdn::db {

text::Json field_json(const FieldValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return text::json_number(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

std::string exact_text(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return text::shortest(*d);
  return format_value(v);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char ch : text) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

}  // namespace gdn::db
