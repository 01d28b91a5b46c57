// Every result of one sweep, loaded once and then extended incrementally while a sweep is still
// writing (results are only ever appended, in id order), plus an index by problem. The results
// table, the plots and the "why does it win" view all read from this one copy.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "gdn/db/model.hpp"

namespace gdn::gui::model {

class SweepRows {
 public:
  // Drops everything and loads the sweep's results (sweep_id 0: empty).
  void load(const db::Database& db, std::int64_t sweep_id);
  // Forgets the loaded sweep (the database went away).
  void clear();
  // Appends results stored since the last load/append; returns how many arrived.
  std::size_t append_new(const db::Database& db);

  std::int64_t sweep_id() const { return sweep_id_; }
  const std::vector<db::ResultRow>& rows() const { return rows_; }
  // Positions in rows() of the results of one problem (empty for an unknown id).
  const std::vector<std::size_t>& rows_of_problem(std::int64_t problem_id) const;
  // Problems in first-seen order, one representative row each (its ProblemRecord).
  const std::vector<std::int64_t>& problem_ids() const { return problem_order_; }
  const db::ProblemRecord& problem(std::int64_t problem_id) const;
  // Bumped on every change so views can cache derived data cheaply.
  std::uint64_t generation() const { return generation_; }

 private:
  void index_from(std::size_t first);

  std::int64_t sweep_id_ = 0;
  std::vector<db::ResultRow> rows_;
  std::map<std::int64_t, std::vector<std::size_t>> by_problem_;
  std::vector<std::int64_t> problem_order_;
  std::uint64_t generation_ = 0;
};

}  // namespace gdn::gui::model
