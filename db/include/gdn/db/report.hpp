// Text renderings of sweeps for `gdnlab report` and `gdnlab compare`: the CLI only parses
// arguments and prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gdn/db/database.hpp"
#include "gdn/db/model.hpp"

namespace gdn::db {

enum class ReportFormat : std::uint8_t { Table, Csv, Json };
std::optional<ReportFormat> parse_report_format(std::string_view text);  // table|csv|json

// Sweep header (device, build, protocol, status), outcome counts, then one row per (problem,
// pass): best variant, p20/p50/p80, spread, runner-up and margin, clock, CUPTI metrics (empty
// when NULL, with the reason in JSON), registers/shared/spills. Sweep defaults to the newest.
// Throws DbError::Invalid when there is no such sweep (or no sweep at all).
std::string render_report(const Database& db, std::optional<std::int64_t> sweep_id,
                          ReportFormat format);

// `gdnlab compare`: sweep B against sweep A (two builds, drivers or protocols
// over the same space). Rows by problem (each sweep's fastest Passed result, compare_sweeps) or
// by candidate (the same variant and plan pins Passed in both, compare_candidates); ratio =
// B p50 / A p50 (< 1: B faster), classed by the [p20, p80] bands. The table and JSON state both
// sweeps' provenance and their device and build differences, and summarise the rows: counts
// per class, the geometric mean of the ratios, the lowest and highest. CSV holds the rows only.
// Throws DbError::Invalid when either sweep is absent or its results fail the integrity checks.
// By pin: what one plan pin does (compare_pinned), each candidate of B pinning the field to the
// value against the same candidate without that pin in A (the same sweep allowed).
enum class CompareBy : std::uint8_t { Problem, Candidate, Pin };
std::optional<CompareBy> parse_compare_by(std::string_view text);  // problem|candidate|pin
// The plan field and value of a comparison by pin.
struct PinChoice {
  const gdn::PlanField* field = nullptr;
  int value = 0;
};
// "FIELD=VALUE", FIELD a plan field's name or its token (pass1_beside_recompute=1, pb=1), VALUE
// one the field takes; nullopt with *error naming what was expected and what was given.
std::optional<PinChoice> parse_pin_choice(std::string_view text, std::string* error);
// The sweeps may be in two databases: then each side's line (table) and object (JSON) names its
// file. CompareBy::Pin needs `pin` (DbError::Invalid without it).
std::string render_comparison(SweepRef a, SweepRef b, CompareBy by, ReportFormat format,
                              const PinChoice* pin = nullptr);
inline std::string render_comparison(const Database& db, std::int64_t sweep_a, std::int64_t sweep_b,
                                     CompareBy by, ReportFormat format, const PinChoice* pin = nullptr) {
  return render_comparison(SweepRef{db, sweep_a}, SweepRef{db, sweep_b}, by, format, pin);
}

}  // namespace gdn::db
