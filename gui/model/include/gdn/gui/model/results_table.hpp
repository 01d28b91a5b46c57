// The results table's view state over SweepRows: which rows pass the filter and in which order.
// Filtering and sorting run in memory over precomputed keys (100k rows sort in milliseconds);
// they rerun only when the filter, the sort or the data changed, never per frame.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gdn/db/model.hpp"
#include "gdn/gui/model/filter.hpp"
#include "gdn/gui/model/sweep_rows.hpp"

namespace gdn::gui::model {

class ResultsTable {
 public:
  // The columns shown, in order (every db::Field by default).
  const std::vector<db::Field>& columns() const { return columns_; }

  // Returns the parse error ("" when fine); a bad filter keeps the previous conditions.
  std::string set_filter(const std::string& text);
  const std::string& filter_text() const { return filter_text_; }
  void set_sort(std::vector<db::SortKey> keys);
  const std::vector<db::SortKey>& sort() const { return sort_; }

  // Recomputes the visible rows if the data, filter or sort changed since the last call.
  void update(const SweepRows& data);
  std::size_t size() const { return visible_.size(); }
  // i-th visible row, in sorted order; valid until the next update().
  const db::ResultRow& row(const SweepRows& data, std::size_t i) const {
    return data.rows()[visible_[i]];
  }
  std::size_t source_index(std::size_t i) const { return visible_[i]; }

 private:
  std::vector<db::Field> columns_ = default_columns();
  static std::vector<db::Field> default_columns();

  std::string filter_text_;
  std::vector<db::Condition> conditions_;
  std::vector<db::SortKey> sort_;
  std::vector<std::size_t> visible_;
  std::uint64_t seen_generation_ = ~0ull;
  std::int64_t seen_sweep_ = -1;
  bool dirty_ = true;
};

// Three-way order of two cells of one field: NULL last, numbers numerically, text bytewise.
int compare_cells(const db::FieldValue& a, const db::FieldValue& b);

}  // namespace gdn::gui::model
