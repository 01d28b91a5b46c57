#include "gdn/gui/model/results_table.hpp"

#include <algorithm>
#include <numeric>

namespace gdn::gui::model {

std::vector<db::Field> ResultsTable::default_columns() {
  std::vector<db::Field> fields;
  for (const db::FieldInfo& info : db::all_fields()) fields.push_back(info.field);
  return fields;
}

std::string ResultsTable::set_filter(const std::string& text) {
  ParsedFilter parsed = parse_filter(text);
  if (!parsed.ok()) return parsed.error;
  if (text != filter_text_) {
    filter_text_ = text;
    conditions_ = std::move(parsed.conditions);
    dirty_ = true;
  }
  return "";
}

void ResultsTable::set_sort(std::vector<db::SortKey> keys) {
  const bool same = keys.size() == sort_.size() &&
                    std::equal(keys.begin(), keys.end(), sort_.begin(), [](auto& a, auto& b) {
                      return a.field == b.field && a.descending == b.descending;
                    });
  if (same) return;
  sort_ = std::move(keys);
  dirty_ = true;
}

int compare_cells(const db::FieldValue& a, const db::FieldValue& b) {
  const bool a_null = std::holds_alternative<std::monostate>(a);
  const bool b_null = std::holds_alternative<std::monostate>(b);
  if (a_null || b_null) return a_null == b_null ? 0 : (a_null ? 1 : -1);
  if (auto ia = std::get_if<std::int64_t>(&a))
    if (auto ib = std::get_if<std::int64_t>(&b)) return (*ia > *ib) - (*ia < *ib);
  auto number = [](const db::FieldValue& v, double& out) {
    if (auto i = std::get_if<std::int64_t>(&v)) return out = double(*i), true;
    if (auto d = std::get_if<double>(&v)) return out = *d, true;
    return false;
  };
  double da = 0, dbl = 0;
  if (number(a, da) && number(b, dbl)) return (da > dbl) - (da < dbl);
  const std::string sa = db::format_value(a), sb = db::format_value(b);
  const int c = sa.compare(sb);
  return (c > 0) - (c < 0);
}

void ResultsTable::update(const SweepRows& data) {
  if (!dirty_ && seen_generation_ == data.generation() && seen_sweep_ == data.sweep_id()) return;
  dirty_ = false;
  seen_generation_ = data.generation();
  seen_sweep_ = data.sweep_id();

  const auto& rows = data.rows();
  visible_.clear();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (matches_all(rows[i], conditions_)) visible_.push_back(i);
  if (sort_.empty()) return;  // id order, as loaded

  // Precompute the keys once per visible row: the comparator then never builds a FieldValue.
  std::vector<std::vector<db::FieldValue>> keys(sort_.size());
  for (std::size_t k = 0; k < sort_.size(); ++k) {
    keys[k].resize(rows.size());
    for (std::size_t i : visible_) keys[k][i] = db::field_value(rows[i], sort_[k].field);
  }
  std::stable_sort(visible_.begin(), visible_.end(), [&](std::size_t x, std::size_t y) {
    for (std::size_t k = 0; k < sort_.size(); ++k) {
      const db::FieldValue& a = keys[k][x];
      const db::FieldValue& b = keys[k][y];
      int c = compare_cells(a, b);
      // NULLs stay last in both directions.
      const bool has_null = std::holds_alternative<std::monostate>(a) ||
                            std::holds_alternative<std::monostate>(b);
      if (sort_[k].descending && !has_null) c = -c;
      if (c != 0) return c < 0;
    }
    return false;
  });
}

}  // namespace gdn::gui::model
