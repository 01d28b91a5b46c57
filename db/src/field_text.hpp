// Private to db/src: how report, gap, compare and export cells are written as JSON values and
// CSV fields, and how gap and compare name a sweep.
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

// One sweep's provenance on a line ("sweep 3 (shapes 'smoke', started ..., PARTIAL: interrupted)
// on NVIDIA H200 (GPU-..., driver ...), build git ... (variant set '...')") and as a JSON object:
// what `gap` and `compare` say of each sweep they read.
std::string sweep_line(const SweepSummary& s);
text::Json sweep_json(const SweepSummary& s);

}  // namespace gdn::db
