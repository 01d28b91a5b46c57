// `gdnlab gap` text: one column list rendered as a table (with provenance and summary), CSV or
// JSON. Reals are exact in CSV and JSON (shortest round-trip); the table rounds them.
#include <sstream>

#include "column_text.hpp"
#include "gdn/db/oracle_gap.hpp"
#include "gdn/db/selection.hpp"

namespace gdn::db {

namespace {

using GapColumn = Column<GapRow>;

std::vector<GapColumn> gap_columns() {
  using R = const GapRow&;
  return {
      {"shape_set", "shape set", [](R r) { return FieldValue(r.problem.shape_set_name); }},
      {"row_index", "row", [](R r) { return FieldValue(std::int64_t{r.problem.row_index}); }},
      {"h_qk", "h_qk", [](R r) { return FieldValue(std::int64_t{r.problem.h_qk}); }},
      {"h_v", "h_v", [](R r) { return FieldValue(std::int64_t{r.problem.h_v}); }},
      {"num_seqs", "seqs", [](R r) { return FieldValue(r.problem.num_seqs); }},
      {"total_tokens", "tokens", [](R r) { return FieldValue(r.problem.total_tokens); }},
      {"max_seqlen", "max len", [](R r) { return FieldValue(r.problem.max_seqlen); }},
      {"seqlens", "seqlens", [](R r) { return FieldValue(r.problem.seqlens); }},
      {"answer", "table", [](R r) { return FieldValue(std::string(to_string(r.answer))); }},
      {"distance", "dist", [](R r) {
         return r.distance >= 0 ? FieldValue(std::int64_t{r.distance}) : FieldValue{};
       }},
      {"bucket", "bucket", [](R r) { return r.entry_key ? FieldValue(describe_bucket(*r.entry_key)) : FieldValue{}; }},
      {"picked", "picked", [](R r) { return text_value(r.picked); }},
      {"picked_p50_ms", "picked p50 ms", [](R r) { return optional_value(r.picked_p50_ms); }},
      {"fastest", "fastest", [](R r) { return FieldValue(r.fastest); }},
      {"fastest_p50_ms", "fastest p50 ms", [](R r) { return FieldValue(r.fastest_p50_ms); }},
      {"ratio", "ratio", [](R r) { return optional_value(r.ratio); }, true},
      {"note", "note", [](R r) { return text_value(r.note); }},
  };
}

using text::fixed;

std::string worst_text(const OracleGap& g) {
  if (!g.worst_row) return "none";
  const GapRow& r = g.rows[*g.worst_row];
  return r.problem.shape_set_name + " row " + std::to_string(r.problem.row_index) + ": " + r.picked + " " +
         format_value(*r.picked_p50_ms) + " ms vs " + r.fastest + " " + format_value(r.fastest_p50_ms) +
         " ms, ratio " + fixed(*r.ratio, 4);
}

std::string render_table(const OracleGap& g, const std::vector<GapColumn>& cols) {
  std::ostringstream o;
  o << "table:    " << sweep_line(g.table_sweep) << ", " << g.table_entries << (g.pass == gdn::Pass::Forward ? " forward" : " backward") << " entries\n"
    << "measured: " << sweep_line(g.measured_sweep) << "\n\n"
    << column_table(g.rows, cols);
  o << "\nrows " << g.rows.size() << ", with the pick measured " << g.measured_rows << "\n";
  if (g.geomean_ratio)
    o << "geometric mean of picked / fastest p50: " << fixed(*g.geomean_ratio, 4) << " (oracle gap "
      << fixed(*g.gap() * 100.0, 2) << " %)\n";
  else
    o << "geometric mean of picked / fastest p50: none (no row has a measured pick)\n";
  o << "worst row: " << worst_text(g) << "\n"
    << "pick without a Passed result in the measured sweep: " << g.unmeasured_picks << " (excluded)\n"
    << "answered by libgdn's default rule (no entry within bucket distance " << gdn::dispatch::kDefaultMaxDistance
    << "): " << g.default_rule_rows << " (excluded)\n";
  return o.str();
}

std::string render_json(const OracleGap& g, const std::vector<GapColumn>& cols) {
  text::Json rows = text::Json::array();
  for (const GapRow& r : g.rows) rows.push_back(column_json(r, cols));
  const text::Json doc = {
      {"table_sweep", sweep_json(g.table_sweep)},
      {"measured_sweep", sweep_json(g.measured_sweep)},
      {"summary",
       {{"table_entries", g.table_entries},
        {"rows", g.rows.size()},
        {"measured_rows", g.measured_rows},
        {"unmeasured_picks", g.unmeasured_picks},
        {"default_rule_rows", g.default_rule_rows},
        {"geomean_ratio", text::json_number(g.geomean_ratio)},
        {"oracle_gap_pct", text::json_number(g.gap() ? std::optional<double>(*g.gap() * 100.0) : std::nullopt)},
        {"worst_row_index", g.worst_row ? text::Json(*g.worst_row) : text::Json(nullptr)}}},
      {"rows", std::move(rows)}};
  return text::dump_json(doc) + "\n";
}

}  // namespace

std::string render_oracle_gap(const OracleGap& gap, ReportFormat format) {
  const std::vector<GapColumn> cols = gap_columns();
  switch (format) {
    case ReportFormat::Table: return render_table(gap, cols);
    case ReportFormat::Csv: return column_csv(gap.rows, cols, true);
    case ReportFormat::Json: return render_json(gap, cols);
  }
  return {};
}

}  // namespace gdn::db
