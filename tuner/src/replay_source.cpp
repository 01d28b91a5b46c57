// Loading a recorded sweep for replay (see replay_source.hpp).
#include "gdn/tuner/replay_source.hpp"

#include <set>
#include <stdexcept>

#include "gdn/tuner/trial_io.hpp"
#include "gdn/db/integrity.hpp"

namespace gdn::tuner {

ReplaySource ReplaySource::load(const std::string& path, std::optional<std::int64_t> sweep_id) {
  ReplaySource src(db::Database::open(path, db::kReadExisting));
  src.path_ = path;
  if (!sweep_id) {
    for (const auto& s : db::list_sweeps(src.db_))
      if (s.result_count > 0) {
        sweep_id = s.sweep.id;
        break;
      }
    if (!sweep_id)
      throw std::runtime_error("--replay: database '" + path + "' holds no sweep with results");
  }
  try {
    src.summary_ = db::sweep_summary(src.db_, *sweep_id);
  } catch (const db::DbError& e) {
    throw std::runtime_error("--replay-sweep: database '" + path + "' has no sweep " +
                             std::to_string(*sweep_id) + " (" + e.what() + ")");
  }
  db::check_sweep_results(src.db_, *sweep_id);  // a damaged recording is refused, not replayed
  db::ResultQuery q;
  q.sweep_id = *sweep_id;
  src.rows_ = db::query_results(src.db_, q);
  std::set<std::string> seen_variants, seen_problems;
  for (std::size_t i = 0; i < src.rows_.size(); ++i) {
    const auto& r = src.rows_[i];
    const auto key = problem_shape_key(r.problem);
    src.index_.emplace(std::make_pair(r.variant.name, key), i);
    if (seen_variants.insert(r.variant.name).second) src.variants_.push_back(r.variant);
    if (seen_problems.insert(key).second) src.problems_.push_back(r.problem);
  }
  return src;
}

const db::ResultRow* ReplaySource::find(const std::string& variant, const db::ProblemRecord& p) const {
  const auto it = index_.find({variant, problem_shape_key(p)});
  return it == index_.end() ? nullptr : &rows_[it->second];
}

std::vector<const db::ResultRow*> ReplaySource::rows_of(const std::string& variant) const {
  std::vector<const db::ResultRow*> out;
  for (const auto& r : rows_)
    if (r.variant.name == variant) out.push_back(&r);
  return out;
}

std::vector<double> ReplaySource::samples(std::int64_t result_id) const { return db::samples_of(db_, result_id); }
std::vector<db::PmSample> ReplaySource::pm_timeline(std::int64_t result_id) const {
  return db::pm_timeline_of(db_, result_id);
}

}  // namespace gdn::tuner
