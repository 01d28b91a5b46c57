#include "gdn/gui/model/sweep_rows.hpp"

#include <stdexcept>
#include <string>

namespace gdn::gui::model {

void SweepRows::clear() {
  sweep_id_ = 0;
  rows_.clear();
  by_problem_.clear();
  problem_order_.clear();
  ++generation_;
}

void SweepRows::load(const db::Database& db, std::int64_t sweep_id) {
  clear();
  sweep_id_ = sweep_id;
  if (sweep_id != 0) append_new(db);
}

std::size_t SweepRows::append_new(const db::Database& db) {
  if (sweep_id_ == 0) return 0;
  db::ResultQuery query;
  query.sweep_id = sweep_id_;
  // No sort keys: results come in id order, so the rows after the ones held are the new ones.
  query.offset = static_cast<std::int64_t>(rows_.size());
  std::vector<db::ResultRow> fresh = db::query_results(db, query);
  if (fresh.empty()) return 0;
  const std::size_t first = rows_.size();
  rows_.insert(rows_.end(), std::make_move_iterator(fresh.begin()),
               std::make_move_iterator(fresh.end()));
  index_from(first);
  ++generation_;
  return fresh.size();
}

void SweepRows::index_from(std::size_t first) {
  for (std::size_t i = first; i < rows_.size(); ++i) {
    const std::int64_t pid = rows_[i].problem.id;
    auto [it, inserted] = by_problem_.try_emplace(pid);
    if (inserted) problem_order_.push_back(pid);
    it->second.push_back(i);
  }
}

const std::vector<std::size_t>& SweepRows::rows_of_problem(std::int64_t problem_id) const {
  static const std::vector<std::size_t> none;
  const auto it = by_problem_.find(problem_id);
  return it == by_problem_.end() ? none : it->second;
}

const db::ProblemRecord& SweepRows::problem(std::int64_t problem_id) const {
  const auto& positions = rows_of_problem(problem_id);
  if (positions.empty())
    throw std::invalid_argument("SweepRows::problem: no result of problem id " +
                                std::to_string(problem_id) + " in sweep " +
                                std::to_string(sweep_id_));
  return rows_[positions.front()].problem;
}

}  // namespace gdn::gui::model
