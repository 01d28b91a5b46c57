// A recorded sweep, loaded for the replay runner (`gdnlab sweep --replay <db>`): its device,
// build, variants, problems and every result with samples and PM timeline. Works on any
// database of the schema; problems are matched by shape (problem_shape_key), not by id.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/model.hpp"

namespace gdn::tuner {

class ReplaySource {
 public:
  // sweep_id: nullopt = the newest sweep that has results. Throws db::DbError (missing file,
  // foreign schema) or std::runtime_error (no sweep with results / unknown sweep id).
  static ReplaySource load(const std::string& path, std::optional<std::int64_t> sweep_id);

  const std::string& path() const { return path_; }
  const db::SweepSummary& sweep() const { return summary_; }
  const std::vector<db::VariantRecord>& variants() const { return variants_; }
  const std::vector<db::ProblemRecord>& problems() const { return problems_; }

  const db::ResultRow* find(const std::string& variant, const db::ProblemRecord& problem) const;
  // Every recorded row of a variant, in id order (the replayed correctness gate looks at the
  // rows of one problem family).
  std::vector<const db::ResultRow*> rows_of(const std::string& variant) const;
  std::vector<double> samples(std::int64_t result_id) const;
  std::vector<db::PmSample> pm_timeline(std::int64_t result_id) const;

 private:
  explicit ReplaySource(db::Database db) : db_(std::move(db)) {}
  db::Database db_;
  std::string path_;
  db::SweepSummary summary_;
  std::vector<db::VariantRecord> variants_;
  std::vector<db::ProblemRecord> problems_;
  std::vector<db::ResultRow> rows_;
  std::map<std::pair<std::string, std::string>, std::size_t> index_;  // (variant, shape key)
};

}  // namespace gdn::tuner
