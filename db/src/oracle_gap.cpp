// The oracle gap of the table exported from one sweep, measured on another (see oracle_gap.hpp).
#include "gdn/db/oracle_gap.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "gdn/db/export.hpp"
#include "gdn/db/selection.hpp"
#include "gdn/db/integrity.hpp"

namespace gdn::db {

namespace dsp = gdn::dispatch;

std::string_view to_string(TableAnswer a) {
  switch (a) {
    case TableAnswer::ExactBucket: return "exact";
    case TableAnswer::NearestBucket: return "nearest";
    case TableAnswer::DefaultRule: return "default";
  }
  return "?";
}

namespace {

[[noreturn]] void invalid(const std::string& what) { throw DbError(DbError::Kind::Invalid, "gap: " + what); }

// How the table answers one problem, and the pick's result among `results` (problem, variant).
void answer(GapRow& row, gdn::Pass pass, std::span<const dsp::Entry> table,
            const std::map<std::pair<std::int64_t, std::string>, const ResultRow*>& results) {
  const dsp::Match match = dsp::lookup(table, bucket_of(row.problem, pass));
  if (!match.found()) {
    row.answer = TableAnswer::DefaultRule;
    row.note = "no table entry within bucket distance " + std::to_string(dsp::kDefaultMaxDistance) +
               ": libgdn's default rule decides";
    return;
  }
  row.answer = match.exact() ? TableAnswer::ExactBucket : TableAnswer::NearestBucket;
  row.entry_key = match.entry->key;
  row.distance = match.distance;
  // The candidate the entry names: its variant with its plan pins (the sweep's row name).
  row.picked = std::string(match.entry->variant) + gdn::pins_suffix(match.entry->plan);
  const auto it = results.find({row.problem.id, row.picked});
  if (it == results.end()) {
    row.note = "the pick has no result for this problem in the measured sweep";
    return;
  }
  const ResultRecord& r = it->second->result;
  row.picked_outcome = r.outcome;
  if (r.outcome != Outcome::Passed || !r.latency_p50_ms) {
    row.note = "the pick has no Passed result for this problem in the measured sweep (" +
               std::string(to_string(r.outcome)) + ")";
    return;
  }
  row.picked_p50_ms = *r.latency_p50_ms;
  row.ratio = *r.latency_p50_ms / row.fastest_p50_ms;
}

}  // namespace

OracleGap oracle_gap(const Database& db, std::int64_t table_sweep, std::int64_t measured_sweep,
                     gdn::Pass pass, bool allow_partial) {
  OracleGap gap;
  gap.pass = pass;
  const std::string pass_name = pass == gdn::Pass::Forward ? "forward" : "backward";
  const Selection selection = select_winners(db, table_sweep);  // throws for an unknown id
  gap.table_sweep = selection.sweep;
  gap.measured_sweep = sweep_summary(db, measured_sweep);
  check_sweep_results(db, table_sweep);
  check_sweep_results(db, measured_sweep);
  // A sweep that did not finish measured part of its space: its table, or its fastest
  // variants, are not the space's. Used only when asked, and then the output says so.
  for (const auto* s : {&gap.table_sweep, &gap.measured_sweep})
    if (s->sweep.status != SweepStatus::Finished && !allow_partial)
      invalid("sweep " + std::to_string(s->sweep.id) + " is " + std::string(to_string(s->sweep.status)) +
              ", not finished; resume it, or pass --allow-partial to compare a partial sweep");
  // The exported table, this pass's entries only: the gap compares this pass's problems.
  std::vector<dsp::Entry> table = dispatch_entries(selection);
  std::erase_if(table, [&](const dsp::Entry& e) { return e.key.pass != pass; });
  if (table.empty())
    invalid("table sweep " + std::to_string(table_sweep) + " has no bucket where one " + pass_name +
            " variant passed every problem: it exports no table of that pass");
  gap.table_entries = table.size();

  ResultQuery q;
  q.sweep_id = measured_sweep;
  q.conditions.push_back({Field::Pass, CompareOp::Eq, std::string(to_string(pass))});
  const std::vector<ResultRow> rows = query_results(db, q);
  std::map<std::pair<std::int64_t, std::string>, const ResultRow*> by_pair;
  for (const ResultRow& r : rows) by_pair[{r.problem.id, r.variant.name}] = &r;

  double log_sum = 0;
  for (const ProblemBest& pb : best_per_problem(db, measured_sweep)) {
    if (pb.pass != pass || !pb.best || !pb.best->result.latency_p50_ms) continue;
    GapRow& row = gap.rows.emplace_back();
    row.problem = pb.problem;
    row.fastest = pb.best->variant.name;
    row.fastest_p50_ms = *pb.best->result.latency_p50_ms;
    answer(row, pass, table, by_pair);
    if (row.answer == TableAnswer::DefaultRule) {
      ++gap.default_rule_rows;
    } else if (!row.ratio) {
      ++gap.unmeasured_picks;
    } else {
      ++gap.measured_rows;
      log_sum += std::log(*row.ratio);
      const std::size_t i = gap.rows.size() - 1;
      if (!gap.worst_row || *row.ratio > *gap.rows[*gap.worst_row].ratio) gap.worst_row = i;
    }
  }
  if (gap.rows.empty())
    invalid("measured sweep " + std::to_string(measured_sweep) +
            " has no " + pass_name + " problem with a Passed result: nothing to compare the table with");
  if (gap.measured_rows > 0) gap.geomean_ratio = std::exp(log_sum / static_cast<double>(gap.measured_rows));
  return gap;
}

}  // namespace gdn::db
