// The results table's filter line: "block_v=64 outcome!=Passed latency_p50_ms<0.5 name~fused".
// Parsed into the database model's own Condition type (gdn/db/model.hpp), then evaluated in
// memory over rows already loaded, so typing a filter on 100k results never re-queries SQLite.
// The semantics are those of db::query_results (a test checks both agree row for row).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gdn/db/model.hpp"

namespace gdn::gui::model {

// Grammar: clauses separated by spaces or commas; a clause is `field op value` with op one of
// = == != < <= > >= ~ (contains), field a db::FieldInfo::name (e.g. block_v, latency_p50_ms)
// or one of the short aliases in filter.cpp (name, p50, ...), value a number for numeric fields
// or text (double-quoted when it holds spaces), or null (= / != only: is / is not NULL).
// A clause without an operator means
// "variant name contains it".
struct ParsedFilter {
  std::vector<db::Condition> conditions;
  std::string error;  // "" when the whole text parsed; otherwise names the clause and why
  bool ok() const { return error.empty(); }
};
ParsedFilter parse_filter(std::string_view text);

// One condition on one row, as db::query_results judges it: a NULL cell matches no comparison;
// a null condition value tests IS NULL (=) / IS NOT NULL (!=); contains ignores ASCII case.
bool matches(const db::ResultRow& row, const db::Condition& condition);
bool matches_all(const db::ResultRow& row, std::span<const db::Condition> conditions);

// Field names the parser accepts, for the filter help tooltip.
std::string filter_help();

}  // namespace gdn::gui::model
