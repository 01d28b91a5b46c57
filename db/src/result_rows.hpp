// Private to db/src: reading joined result rows (result + variant + problem).
#pragma once

#include <string>
#include <vector>

#include "gdn/db/model.hpp"
#include "statement.hpp"

namespace gdn::db {

// "SELECT <result, variant, problem columns> FROM results r JOIN variants vr JOIN problems p"
std::string result_row_select();
ResultRow read_result_row(const Statement& s);
// Every result of a sweep, ordered by problem (shape set, row), pass, then p50.
std::vector<ResultRow> all_results_of_sweep(const Database& db, std::int64_t sweep_id);

}  // namespace gdn::db
