// `gdnlab gap` text: one column list rendered as a table (with provenance and summary), CSV or
// JSON. Reals are exact in CSV and JSON (shortest round-trip); the table rounds them.
#include <functional>
#include <sstream>

#include "gdn/db/oracle_gap.hpp"
#include "gdn/db/selection.hpp"
#include "field_text.hpp"
#include "gdn/text/number.hpp"

namespace gdn::db {

namespace {

struct Column {
  std::string_view name;   // CSV/JSON key
  std::string_view label;  // table header
  std::function<FieldValue(const GapRow&)> value;
  bool fixed4 = false;     // table: 4 decimals (ratios), else 4 significant digits
};

FieldValue opt(const std::optional<double>& v) { return v ? FieldValue(*v) : FieldValue{}; }
FieldValue text(const std::string& s) { return s.empty() ? FieldValue{} : FieldValue(s); }

std::vector<Column> gap_columns() {
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
      {"picked", "picked", [](R r) { return text(r.picked); }},
      {"picked_p50_ms", "picked p50 ms", [](R r) { return opt(r.picked_p50_ms); }},
      {"fastest", "fastest", [](R r) { return FieldValue(r.fastest); }},
      {"fastest_p50_ms", "fastest p50 ms", [](R r) { return FieldValue(r.fastest_p50_ms); }},
      {"ratio", "ratio", [](R r) { return opt(r.ratio); }, true},
      {"note", "note", [](R r) { return text(r.note); }},
  };
}

using text::fixed;

std::string sweep_line(const SweepSummary& s) {
  const std::string partial =
      s.sweep.status == SweepStatus::Finished ? "" : ", PARTIAL: " + std::string(to_string(s.sweep.status));
  return "sweep " + std::to_string(s.sweep.id) + " (shapes '" + s.sweep.shapes + "', started " +
         s.sweep.started_at + partial + ") on " + s.device.name + " (" + s.device.uuid + ", driver " +
         s.device.driver_version + "), build git " + s.build.git_sha + " (variant set '" +
         s.build.variant_set + "')";
}

std::string worst_text(const OracleGap& g) {
  if (!g.worst_row) return "none";
  const GapRow& r = g.rows[*g.worst_row];
  return r.problem.shape_set_name + " row " + std::to_string(r.problem.row_index) + ": " + r.picked + " " +
         format_value(*r.picked_p50_ms) + " ms vs " + r.fastest + " " + format_value(r.fastest_p50_ms) +
         " ms, ratio " + fixed(*r.ratio, 4);
}

std::string render_table(const OracleGap& g, const std::vector<Column>& cols) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const Column& c : cols) width.push_back(c.label.size());
  for (const GapRow& r : g.rows) {
    auto& line = cells.emplace_back();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const FieldValue v = cols[i].value(r);
      const auto* d = std::get_if<double>(&v);
      line.push_back(d && cols[i].fixed4 ? fixed(*d, 4) : format_value(v));
      width[i] = std::max(width[i], line.back().size());
    }
  }
  std::ostringstream o;
  o << "table:    " << sweep_line(g.table_sweep) << ", " << g.table_entries << (g.pass == gdn::Pass::Forward ? " forward" : " backward") << " entries\n"
    << "measured: " << sweep_line(g.measured_sweep) << "\n\n";
  auto emit = [&](auto cell_of) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const std::string cell = cell_of(i);
      o << (i ? "  " : "") << cell << std::string(i + 1 < cols.size() ? width[i] - cell.size() : 0, ' ');
    }
    o << "\n";
  };
  emit([&](std::size_t i) { return std::string(cols[i].label); });
  for (const auto& line : cells) emit([&](std::size_t i) { return line[i]; });
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

std::string render_csv(const OracleGap& g, const std::vector<Column>& cols) {
  std::ostringstream o;
  for (std::size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << cols[i].name;
  o << "\n";
  for (const GapRow& r : g.rows) {
    for (std::size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << csv_field(exact_text(cols[i].value(r)));
    o << "\n";
  }
  return o.str();
}

text::Json json_sweep(const SweepSummary& s) {
  return {{"id", s.sweep.id},
          {"status", to_string(s.sweep.status)},
          {"shapes", s.sweep.shapes},
          {"started_at", s.sweep.started_at},
          {"device", s.device.name},
          {"device_uuid", s.device.uuid},
          {"driver", s.device.driver_version},
          {"git_sha", s.build.git_sha},
          {"variant_set", s.build.variant_set}};
}

std::string render_json(const OracleGap& g, const std::vector<Column>& cols) {
  text::Json rows = text::Json::array();
  for (const GapRow& r : g.rows) {
    text::Json row = text::Json::object();
    for (const Column& c : cols) row[std::string(c.name)] = field_json(c.value(r));
    rows.push_back(std::move(row));
  }
  const text::Json doc = {
      {"table_sweep", json_sweep(g.table_sweep)},
      {"measured_sweep", json_sweep(g.measured_sweep)},
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
  const std::vector<Column> cols = gap_columns();
  switch (format) {
    case ReportFormat::Table: return render_table(gap, cols);
    case ReportFormat::Csv: return render_csv(gap, cols);
    case ReportFormat::Json: return render_json(gap, cols);
  }
  return {};
}

}  // namespace gdn::db
