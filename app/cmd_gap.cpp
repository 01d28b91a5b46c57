// gdnlab gap: the oracle gap of the dispatch table exported from one sweep, measured on a sweep
// (the db/ computation; this file parses arguments and writes the text).
#include <iostream>
#include <limits>

#include "commands.hpp"
#include "option_checks.hpp"
#include "gdn/db/oracle_gap.hpp"

namespace gdn::cli {

namespace {

struct GapArgs {
  std::string db_path;
  std::int64_t table_sweep = 0;
  std::int64_t measured_sweep = 0;  // 0: the table sweep
  std::string format = "table";
  std::string out;                  // empty: stdout
  std::string pass = "fwd";         // fwd | bwd
  bool allow_partial = false;
};

int run_gap(const GapArgs& a) {
  const db::ReportFormat fmt = report_format_option(a.format);
  if (const auto refused = refuse_directory_out("gap", a.out)) return *refused;
  const auto pass = db::parse_pass(a.pass);
  if (!pass) return usage_error("gap", "--pass: expected fwd or bwd, got '" + a.pass + "'");
  const auto database = db::Database::open(a.db_path, db::kReadExisting);
  const auto gap = db::oracle_gap(database, a.table_sweep, a.measured_sweep > 0 ? a.measured_sweep : a.table_sweep,
                                  *pass, a.allow_partial);
  const std::string text = db::render_oracle_gap(gap, fmt);
  // On stderr: stdout carries the rendering in the format asked for.
  print_origins(std::cerr, database, a.table_sweep);
  if (a.measured_sweep > 0 && a.measured_sweep != a.table_sweep) print_origins(std::cerr, database, a.measured_sweep);
  return write_output(a.out, text);
}

}  // namespace

void add_gap(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand(
      "gap", "Oracle gap of a dispatch table: per problem of one pass, the table's pick vs the fastest measured "
             "candidate");
  auto a = std::make_shared<GapArgs>();
  sub->add_option("--db", a->db_path, "Results database")->required();
  sub->add_option("--table-sweep", a->table_sweep,
                  "Sweep whose exported table is judged (what `gdnlab export --sweep` would write)")
      ->required()->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--sweep", a->measured_sweep, "Sweep that measures it (default: the table sweep)")
      ->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--format", a->format, "table | csv (rows only) | json")->capture_default_str();
  sub->add_option("--pass", a->pass, "fwd | bwd: whose table entries and problems")->capture_default_str();
  sub->add_option("--out", a->out, "Write to this file instead of stdout (replaced atomically)");
  sub->add_flag("--allow-partial", a->allow_partial,
                "Accept sweeps that did not finish (interrupted or running); the output marks them PARTIAL");
  sub->footer("Rows: problems of the measured sweep (of --pass) with a Passed result. ratio = picked p50 / "
              "fastest p50; the oracle gap is their geometric mean - 1. Rows answered by libgdn's default "
              "rule (no entry within bucket distance 4) and picks without a Passed result are counted "
              "and left out of the mean.\n");
  sub->callback([&run, a] { run = [a] { return run_gap(*a); }; });
}

}  // namespace gdn::cli
