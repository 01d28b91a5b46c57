// JSON through nlohmann/json. Objects keep the order their keys were set in (ordered_json), so
// written files read in a stable, meaningful order.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gdn::text {

using Json = nlohmann::ordered_json;

// Serialises `value`. Text from a database or a file system need not be UTF-8: invalid bytes
// are written as U+FFFD, so the output is always valid JSON. indent < 0: one line.
std::string dump_json(const Json& value, int indent = 2);

// A number, or null when absent or not finite (JSON has no NaN or infinity).
Json json_number(std::optional<double> value);

// Parses `text`; throws std::invalid_argument naming `what` and the parser's complaint.
Json parse_json(std::string_view text, std::string_view what);

}  // namespace gdn::text
