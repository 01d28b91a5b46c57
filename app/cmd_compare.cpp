// gdnlab compare: sweep B against sweep A (of one database or two), by problem, by candidate or by
// one plan pin (the
// db/ computation and rendering; this file parses arguments and writes the text).
#include <filesystem>
#include <iostream>
#include <optional>
#include <limits>

#include "commands.hpp"
#include "option_checks.hpp"

namespace gdn::cli {

namespace {

struct CompareArgs {
  std::string db_path;
  std::string against_db;  // empty: db_path
  std::int64_t sweep_a = 0;
  std::int64_t sweep_b = 0;
  std::string by = "problem";
  std::string pin;  // --by pin: FIELD=VALUE
  std::string format = "table";
  std::string out;  // empty: stdout
};

int run_compare(const CompareArgs& a) {
  const auto by = db::parse_compare_by(a.by);
  if (!by) return usage_error("compare", "--by: expected problem, candidate or pin, got '" + a.by + "'");
  std::optional<db::PinChoice> pin;
  if (*by == db::CompareBy::Pin) {
    std::string error;
    pin = db::parse_pin_choice(a.pin, &error);
    if (!pin) return usage_error("compare", "--pin: " + error);
  } else if (!a.pin.empty()) {
    return usage_error("compare", "--pin: expected only with --by pin, got --by " + a.by);
  }
  const db::ReportFormat fmt = report_format_option(a.format);
  if (const auto refused = refuse_directory_out("compare", a.out)) return *refused;
  const auto database = db::Database::open(a.db_path, db::kReadExisting);
  // Sweep B's database: --db's unless --against-db names another file.
  std::error_code ec;
  const bool other_file = !a.against_db.empty() && !std::filesystem::equivalent(a.db_path, a.against_db, ec);
  std::optional<db::Database> other;
  if (other_file) other.emplace(db::Database::open(a.against_db, db::kReadExisting));
  const db::Database& database_b = other ? *other : database;
  if (!other_file && a.sweep_a == a.sweep_b && !pin)
    return usage_error("compare", "--against: expected a sweep other than --sweep " + std::to_string(a.sweep_a) +
                                      " of the same database, got the same");
  const std::string text =
      db::render_comparison(db::SweepRef{database, a.sweep_a}, db::SweepRef{database_b, a.sweep_b}, *by, fmt,
                            pin ? &*pin : nullptr);
  // On stderr: stdout carries the rendering in the format asked for.
  print_origins(std::cerr, database, a.sweep_a);
  print_origins(std::cerr, database_b, a.sweep_b);
  return write_output(a.out, text);
}

}  // namespace

void add_compare(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand(
      "compare", "Compare two sweeps (two builds, drivers or protocols): per problem or per "
                 "candidate, B's p50 over A's, classed by the measured noise");
  auto a = std::make_shared<CompareArgs>();
  const auto sweep_ids = integer_in(1, std::numeric_limits<std::int64_t>::max());
  sub->add_option("--db", a->db_path, "Results database of sweep A (and of B, without --against-db)")->required();
  sub->add_option("--sweep", a->sweep_a, "Sweep A, the reference")->required()->check(sweep_ids);
  sub->add_option("--against", a->sweep_b, "Sweep B, compared with A")->required()->check(sweep_ids);
  sub->add_option("--against-db", a->against_db, "Results database of sweep B, when it is another file");
  sub->add_option("--by", a->by,
                  "problem: each sweep's fastest Passed result per problem | candidate: the same variant and "
                  "plan pins Passed in both | pin: each candidate of B with the --pin against the same "
                  "candidate without it in A (the same sweep allowed)")
      ->capture_default_str();
  sub->add_option("--pin", a->pin,
                  "With --by pin: FIELD=VALUE, a plan field by name or token (pass1_beside_recompute=1, pb=1)");
  sub->add_option("--format", a->format, "table | csv (rows only) | json")->capture_default_str();
  sub->add_option("--out", a->out, "Write to this file instead of stdout (replaced atomically)");
  sub->footer("Problems match by shape (heads, dims, dtype, batch, sequence lengths), so sweeps of different "
              "shape-set files compare. B/A = B p50 / A p50 (< 1: B faster); class: faster or slower when the "
              "[p20, p80] bands do not overlap, same when each p50 lies in the other's band, else unclear. "
              "To compare two builds, sweep with each into the same database, or name the second with --against-db. "
              "To see what one plan pin does, sweep candidates with and without it and compare the sweep with "
              "itself --by pin.\n");
  sub->callback([&run, a] { run = [a] { return run_compare(*a); }; });
}

}  // namespace gdn::cli
