// The headless query model shared by the dashboard, `gdnlab report` and the export: sweeps
// with outcome counts, results filtered and sorted by any field, samples and PM timelines,
// best variant per problem, and sweep-vs-sweep comparison. No ImGui, no printing here.
// Anything that aggregates takes explicit sweep ids: results of different devices or builds
// are never mixed silently.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/records.hpp"

namespace gdn::db {

// ---- sweeps -----------------------------------------------------------------------------
struct SweepSummary {
  SweepRecord sweep;
  DeviceRecord device;
  BuildRecord build;
  std::array<std::int64_t, kOutcomeCount> outcome_counts{};  // indexed by Outcome
  std::int64_t result_count = 0;
  std::int64_t count(Outcome o) const { return outcome_counts[static_cast<std::size_t>(o)]; }
};
std::vector<SweepSummary> list_sweeps(const Database& db);  // newest first
SweepSummary sweep_summary(const Database& db, std::int64_t sweep_id);  // DbError::Invalid if absent
// The newest sweep with at least one Passed result; nullopt when there is none.
std::optional<std::int64_t> latest_sweep_with_passes(const Database& db);
// The same among finished sweeps only (an interrupted or running sweep measured part of its
// space: its winners are not the space's).
std::optional<std::int64_t> latest_finished_sweep_with_passes(const Database& db);

// ---- one result with its variant and problem ----------------------------------------------
struct ResultRow {
  ResultRecord result;
  VariantRecord variant;
  ProblemRecord problem;
};

// Every column a results table can show, sort or filter on.
enum class Field : std::uint8_t {
  // variant (config and plan pins: the sweep's dimensions)
  VariantName, Pass, Family, BlockV, Stages, Roles, CpSegmentChunks, PinPrepareOverlap,
  PinCpFirstSegment, PinPrepareSplit, PinPrepareHeads, PinFixupCols, PinLocalHeads,
  PinRecomputeCpChunks, PinPass1BesideRecompute, PinGroupSumBeside,
  // problem
  ShapeSet, RowIndex, HQk, HV, K, V, DType, Batch, NumSeqs, TotalTokens, MaxSeqlen,
  // result
  Outcome, Message, MaxRelRms, LatencyP20, LatencyP50, LatencyP80, SampleCount, RelSpread,
  ClockMhz, SmBusyPct, AchievedOccupancyPct, IssueActivePct, DramPct, TensorPipePct,
  SmThroughputPct, MemorySolPct, GpcClockHz, Registers, SharedBytes, LocalBytes,
  // the launch plan the result ran with
  PlanCpSegmentChunks, PlanPrepareOverlap, PlanFirstSegment, PlanPrepareSplitChunk,
  PlanPrepareHeads, PlanTailPrepareHeads, PlanFixupCols, PlanBlockV, PlanLocalHeads,
  PlanRecomputeCpChunks, PlanPass1BesideRecompute, PlanGroupSumBeside,
};
enum class FieldKind : std::uint8_t { Integer, Real, Text };
struct FieldInfo {
  Field field;
  std::string_view name;   // snake_case, used by the CLI and JSON ("latency_p50_ms")
  std::string_view label;  // column header ("p50 ms")
  FieldKind kind;
  bool is_config;          // a sweep dimension: a KernelConfig field or a plan pin (-1: the
                           // rule) (plot axes, heatmaps)
};
std::span<const FieldInfo> all_fields();
const FieldInfo& field_info(Field f);
std::optional<Field> parse_field(std::string_view name);  // by FieldInfo::name

// A cell: NULL, integer, real or text. Enums (pass, family, roles, outcome) are their text.
using FieldValue = std::variant<std::monostate, std::int64_t, double, std::string>;
FieldValue field_value(const ResultRow& row, Field f);
std::string format_value(const FieldValue& v);  // "" for NULL; reals with 4 significant digits

enum class CompareOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Contains };
struct Condition {
  Field field;
  CompareOp op = CompareOp::Eq;
  FieldValue value;  // Contains needs text; comparisons with NULL match nothing
};
struct SortKey {
  Field field;
  bool descending = false;  // NULLs always sort last
};
struct ResultQuery {
  std::int64_t sweep_id = 0;              // required
  std::vector<Condition> conditions;      // all must hold
  std::vector<SortKey> sort;              // empty: by id
  std::int64_t limit = -1;                // -1: no limit (the dashboard pages 100k rows)
  std::int64_t offset = 0;
};
// Throws DbError::Invalid naming the condition whose value kind does not fit its field.
std::vector<ResultRow> query_results(const Database& db, const ResultQuery& query);
std::int64_t count_results(const Database& db, const ResultQuery& query);  // ignores limit
std::optional<ResultRow> result_by_id(const Database& db, std::int64_t result_id);

std::vector<double> samples_of(const Database& db, std::int64_t result_id);    // by idx
std::vector<PmSample> pm_timeline_of(const Database& db, std::int64_t result_id);

// ---- best per problem ------------------------------------------------------------------------
struct ProblemBest {
  ProblemRecord problem;
  gdn::Pass pass = gdn::Pass::Forward;
  std::optional<ResultRow> best;       // fastest Passed by p50; nullopt when none passed
  std::optional<ResultRow> runner_up;  // second fastest Passed
  std::optional<double> margin;        // runner_up p50 / best p50 - 1 (0.05 = best is 5% faster)
  std::array<std::int64_t, kOutcomeCount> outcome_counts{};
};
// One entry per (problem, pass) that has any result in the sweep, in problem order.
std::vector<ProblemBest> best_per_problem(const Database& db, std::int64_t sweep_id);

// ---- compare two sweeps ----------------------------------------------------------------------
// How B's best time relates to A's best time on one problem, judged by the measured noise:
//   Faster / Slower: the [p20, p80] bands do not overlap;
//   Same:            each p50 lies inside the other's [p20, p80] band;
//   Unclear:         the bands overlap only partly, or a side has no Passed result.
enum class Difference : std::uint8_t { Same, Faster, Slower, Unclear };
std::string_view to_string(Difference d);

struct ProblemComparison {
  ProblemRecord problem;  // from sweep A when present there, else from B
  gdn::Pass pass = gdn::Pass::Forward;
  std::optional<ResultRow> best_a;
  std::optional<ResultRow> best_b;
  std::optional<double> ratio;  // b p50 / a p50
  Difference difference = Difference::Unclear;
  std::string note;             // why Unclear, when it is
};
struct SweepComparison {
  SweepSummary a;
  SweepSummary b;
  // Stated, never hidden: "device: name NVIDIA H200 vs NVIDIA H100; driver 580 vs 575", "" if same.
  std::string device_differences;
  std::string build_differences;
  std::vector<ProblemComparison> problems;  // matched by shape (heads, dims, dtype, batch, seqlens)
  std::array<std::int64_t, 4> difference_counts{};  // indexed by Difference
};
// A sweep of a database: the two sides of a comparison may live in different files (two builds
// swept into two databases).
struct SweepRef {
  const Database& db;
  std::int64_t id = 0;
};
SweepComparison compare_sweeps(SweepRef a, SweepRef b);
inline SweepComparison compare_sweeps(const Database& db, std::int64_t sweep_a, std::int64_t sweep_b) {
  return compare_sweeps(SweepRef{db, sweep_a}, SweepRef{db, sweep_b});
}

// One candidate (a variant with its plan pins: the variant row's name, "+lh2" suffix and all)
// on one problem, Passed in both sweeps: the comparison of two builds or two drivers over the
// same space, where the per-problem best may change hands.
struct CandidateComparison {
  ProblemRecord problem;  // from sweep A
  gdn::Pass pass = gdn::Pass::Forward;
  std::string candidate;    // A's (and B's, but by pin)
  std::string candidate_b;  // by pin: B's, the candidate with the pin
  ResultRow a;
  ResultRow b;
  double ratio = 1;  // b p50 / a p50
  Difference difference = Difference::Unclear;
};
// Every candidate Passed in both sweeps, problems matched by shape as compare_sweeps does, in
// sweep A's problem order, then by candidate name.
std::vector<CandidateComparison> compare_candidates(SweepRef a, SweepRef b);
inline std::vector<CandidateComparison> compare_candidates(const Database& db, std::int64_t sweep_a,
                                                           std::int64_t sweep_b) {
  return compare_candidates(SweepRef{db, sweep_a}, SweepRef{db, sweep_b});
}
// What one plan pin does, problem by problem: every candidate Passed in sweep B that pins
// `field` to `value`, against the same candidate with that field left to the rule (its name
// without the pin's token) Passed in sweep A, which may be the same sweep. Problems matched by
// shape; in sweep A's problem order, then by B's candidate name.
std::vector<CandidateComparison> compare_pinned(SweepRef a, SweepRef b, const gdn::PlanField& field, int value);

// exp(mean(log r)) over the positive finite ratios; nullopt when there is none.
std::optional<double> geometric_mean(const std::vector<double>& ratios);
Difference classify_difference(double a_p20, double a_p50, double a_p80, double b_p20,
                               double b_p50, double b_p80);

}  // namespace gdn::db
