// Private to db/src: how report, gap and export cells are written as JSON values and CSV fields.
#pragma once

#include <string>
#include <string_view>

#include "gdn/db/model.hpp"
#include "gdn/text/json.hpp"

namespace gdn::db {

// null, an integer, a number (null when not finite) or a string.
text::Json field_json(const FieldValue& value);

// Reals exact (shortest round-trip), the rest as format_value spells it.
std::string exact_text(const FieldValue& value);

// An RFC 4180 field: quoted only when needed.
std::string csv_field(std::string_view text);

}  // namespace gdn::db
