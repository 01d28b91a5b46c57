// Sweep summaries: provenance (device, build), protocol, status and counts by outcome.
#include "gdn/db/model.hpp"
#include "row_codec.hpp"
#include "statement.hpp"

namespace gdn::db {

namespace {

std::string summary_select() {
  return "SELECT " + prefixed("s", kSweepColumns) + ", " + prefixed("d", kDeviceColumns) + ", " +
         prefixed("b", kBuildColumns) +
         " FROM sweeps s JOIN devices d ON d.id = s.device_id JOIN builds b ON b.id = s.build_id";
}

SweepSummary read_summary(const Statement& s) {
  constexpr int kSweepN = column_count(kSweepColumns);
  constexpr int kDeviceN = column_count(kDeviceColumns);
  SweepSummary out;
  out.sweep = read_sweep(s, 0);
  out.device = read_device(s, kSweepN);
  out.build = read_build(s, kSweepN + kDeviceN);
  return out;
}

void fill_counts(const Database& db, SweepSummary& summary) {
  Statement s(db, "SELECT outcome, count(*) FROM results WHERE sweep_id = ?1 GROUP BY outcome");
  s.bind(1, summary.sweep.id);
  while (s.step()) {
    const auto outcome = parse_outcome(s.text(0));
    if (!outcome) continue;  // the CHECK constraint makes this unreachable
    summary.outcome_counts[static_cast<std::size_t>(*outcome)] = s.int64(1);
    summary.result_count += s.int64(1);
  }
}

}  // namespace

std::vector<SweepSummary> list_sweeps(const Database& db) {
  Statement s(db, summary_select() + " ORDER BY s.id DESC");
  std::vector<SweepSummary> out;
  while (s.step()) out.push_back(read_summary(s));
  for (SweepSummary& summary : out) fill_counts(db, summary);
  return out;
}

SweepSummary sweep_summary(const Database& db, std::int64_t sweep_id) {
  Statement s(db, summary_select() + " WHERE s.id = ?1");
  s.bind(1, sweep_id);
  if (!s.step())
    throw DbError(DbError::Kind::Invalid, "sweep id " + std::to_string(sweep_id) +
                                              " does not exist in '" + db.path() + "'");
  SweepSummary out = read_summary(s);
  fill_counts(db, out);
  return out;
}

std::optional<std::int64_t> latest_sweep_with_passes(const Database& db) {
  Statement s(db, "SELECT max(sweep_id) FROM results WHERE outcome = 'Passed'");
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return s.int64(0);
}

std::optional<std::int64_t> latest_finished_sweep_with_passes(const Database& db) {
  Statement s(db, "SELECT max(r.sweep_id) FROM results r JOIN sweeps w ON w.id = r.sweep_id "
                  "WHERE r.outcome = 'Passed' AND w.status = 'finished'");
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return s.int64(0);
}

}  // namespace gdn::db
