// The oracle gap of a dispatch table: how much slower the table's picks are than the fastest
// measured variant, problem by problem. One implementation for `gdnlab gap`.
//
// The table is the one `gdnlab export` writes for the table sweep (select_winners, overrides
// included, turned into entries by dispatch_entries) and it is read with gdn::dispatch::lookup,
// as libgdn does. The longest sequence is taken as known (the caller gave cu_seqlens_host or
// max_seqlen_hint), as in the table's own buckets. The measured sweep (by default the same)
// gives, for each of its forward problems with at least one Passed result, the p50 of the pick
// and of the fastest Passed variant.
//
// A problem with no entry within the lookup distance is answered by libgdn's default selection
// rule, which depends on the compiled variants and the device: such rows name no pick and are
// left out of the geometric mean (and counted). So are rows whose pick has no Passed result in
// the measured sweep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/dispatch_table.hpp"
#include "gdn/db/model.hpp"
#include "gdn/db/report.hpp"

namespace gdn::db {

enum class TableAnswer : std::uint8_t { ExactBucket, NearestBucket, DefaultRule };
std::string_view to_string(TableAnswer a);  // "exact" | "nearest" | "default"

struct GapRow {
  ProblemRecord problem;
  TableAnswer answer = TableAnswer::DefaultRule;
  std::optional<gdn::dispatch::BucketKey> entry_key;  // the entry that answered
  int distance = -1;                                  // bucket distance to it (0: exact)
  std::string picked;                                 // "" for the default rule
  std::optional<Outcome> picked_outcome;              // the pick's result in the measured sweep
  std::optional<double> picked_p50_ms;                // nullopt unless that result Passed
  std::string fastest;                                // fastest Passed variant (ties: name)
  double fastest_p50_ms = 0;
  std::optional<double> ratio;                        // picked_p50 / fastest_p50
  std::string note;                                   // why there is no ratio, "" otherwise
};

struct OracleGap {
  gdn::Pass pass = gdn::Pass::Forward;  // the pass whose entries and problems are compared
  SweepSummary table_sweep;
  SweepSummary measured_sweep;
  std::size_t table_entries = 0;
  std::vector<GapRow> rows;             // problem order (shape set, row index)
  std::int64_t measured_rows = 0;       // rows with a ratio
  std::int64_t unmeasured_picks = 0;    // table picked a variant with no Passed result here
  std::int64_t default_rule_rows = 0;   // no table entry: libgdn's default rule decides
  std::optional<double> geomean_ratio;  // over the rows with a ratio
  std::optional<std::size_t> worst_row; // index into rows of the largest ratio (first if tied)
  // geomean_ratio - 1: 0.03 means the table is 3 % slower than the oracle on average.
  std::optional<double> gap() const {
    return geomean_ratio ? std::optional<double>(*geomean_ratio - 1.0) : std::nullopt;
  }
};

// Throws DbError::Invalid for an unknown sweep id, a table sweep with no bucket where a
// forward variant passed every problem, or a measured sweep with no Passed forward result.
// `pass`: the forward's or the backward's entries and problems.
OracleGap oracle_gap(const Database& db, std::int64_t table_sweep, std::int64_t measured_sweep,
                     gdn::Pass pass = gdn::Pass::Forward, bool allow_partial = false);

// Table: the provenance of both sweeps, one line per row, then the summary lines. CSV: the
// rows only (a header line, then one line per row). JSON: {"table_sweep", "measured_sweep",
// "summary", "rows"}.
std::string render_oracle_gap(const OracleGap& gap, ReportFormat format);

}  // namespace gdn::db
