// Private to db/src: a list of columns over some row type, rendered as an aligned table, CSV
// or JSON rows: one renderer for `gdnlab report`, `gap` and `compare`.
#pragma once

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "field_text.hpp"
#include "gdn/db/model.hpp"
#include "gdn/text/number.hpp"

namespace gdn::db {

template <class Row>
struct Column {
  std::string_view name;   // CSV/JSON key
  std::string_view label;  // table header
  std::function<FieldValue(const Row&)> value;
  bool fixed4 = false;     // table: 4 decimals (ratios), else 4 significant digits
};

inline FieldValue optional_value(const std::optional<double>& v) { return v ? FieldValue(*v) : FieldValue{}; }
inline FieldValue text_value(const std::string& s) { return s.empty() ? FieldValue{} : FieldValue(s); }

// The header line and one line per row, columns two spaces apart and padded to their widest
// cell (the last column unpadded).
template <class Row>
std::string column_table(const std::vector<Row>& rows, const std::vector<Column<Row>>& cols) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const Column<Row>& c : cols) width.push_back(c.label.size());
  for (const Row& r : rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const FieldValue v = cols[i].value(r);
      const auto* d = std::get_if<double>(&v);
      line.push_back(d && cols[i].fixed4 ? text::fixed(*d, 4) : format_value(v));
      width[i] = std::max(width[i], line.back().size());
    }
  }
  std::ostringstream o;
  auto emit = [&](auto cell_of) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const std::string cell = cell_of(i);
      o << (i ? "  " : "") << cell << std::string(i + 1 < cols.size() ? width[i] - cell.size() : 0, ' ');
    }
    o << "\n";
  };
  emit([&](std::size_t i) { return std::string(cols[i].label); });
  for (const auto& line : cells) emit([&](std::size_t i) { return line[i]; });
  return o.str();
}

// RFC 4180 lines: the header of names, then the rows; reals exact (shortest round-trip) when
// `exact`, else as the table spells them.
template <class Row>
std::string column_csv(const std::vector<Row>& rows, const std::vector<Column<Row>>& cols, bool exact) {
  std::ostringstream o;
  for (std::size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << cols[i].name;
  o << "\n";
  for (const Row& r : rows) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const FieldValue v = cols[i].value(r);
      o << (i ? "," : "") << csv_field(exact ? exact_text(v) : format_value(v));
    }
    o << "\n";
  }
  return o.str();
}

// One JSON object per row, keyed by the columns' names.
template <class Row>
text::Json column_json(const Row& r, const std::vector<Column<Row>>& cols) {
  text::Json row = text::Json::object();
  for (const Column<Row>& c : cols) row[std::string(c.name)] = field_json(c.value(r));
  return row;
}

}  // namespace gdn::db
