// JSON helpers (see json.hpp).
#include "gdn/text/json.hpp"

#include <cmath>
#include <stdexcept>

namespace gdn::text {

std::string dump_json(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json json_number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

Json parse_json(std::string_view text, std::string_view what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    throw std::invalid_argument(std::string(what) + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace gdn::text
