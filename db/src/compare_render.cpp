// `gdnlab compare` text: sweep B against sweep A, by problem or by candidate, as a table (with
// both sweeps' provenance and a summary), CSV (rows only) or JSON. Reals are exact in CSV and
// JSON; the table rounds them.
#include <algorithm>
#include <charconv>
#include <sstream>

#include "column_text.hpp"
#include "gdn/db/integrity.hpp"
#include "gdn/db/report.hpp"

namespace gdn::db {

namespace {

// One rendered row, whichever the granularity: the problem, what each sweep ran there (its
// fastest candidate, or the candidate compared), their bands, the ratio and its class.
struct CompareRow {
  ProblemRecord problem;
  gdn::Pass pass = gdn::Pass::Forward;
  std::string candidate_a, candidate_b;
  std::optional<ResultRecord> a, b;
  std::optional<double> ratio;
  std::optional<Difference> difference;
  std::string note;
};

FieldValue p50(const std::optional<ResultRecord>& r) { return r ? optional_value(r->latency_p50_ms) : FieldValue{}; }
FieldValue p20(const std::optional<ResultRecord>& r) { return r ? optional_value(r->latency_p20_ms) : FieldValue{}; }
FieldValue p80(const std::optional<ResultRecord>& r) { return r ? optional_value(r->latency_p80_ms) : FieldValue{}; }

std::vector<Column<CompareRow>> compare_columns(CompareBy by) {
  using R = const CompareRow&;
  std::vector<Column<CompareRow>> cols = {
      {"shape_set", "shape set", [](R r) { return FieldValue(r.problem.shape_set_name); }},
      {"row_index", "row", [](R r) { return FieldValue(std::int64_t{r.problem.row_index}); }},
      {"pass", "pass", [](R r) { return FieldValue(std::string(to_string(r.pass))); }},
      {"h_qk", "h_qk", [](R r) { return FieldValue(std::int64_t{r.problem.h_qk}); }},
      {"h_v", "h_v", [](R r) { return FieldValue(std::int64_t{r.problem.h_v}); }},
      {"num_seqs", "seqs", [](R r) { return FieldValue(r.problem.num_seqs); }},
      {"total_tokens", "tokens", [](R r) { return FieldValue(r.problem.total_tokens); }},
      {"seqlens", "seqlens", [](R r) { return FieldValue(r.problem.seqlens); }}};
  if (by == CompareBy::Candidate) {
    cols.push_back({"candidate", "candidate", [](R r) { return FieldValue(r.candidate_a); }});
  } else if (by == CompareBy::Pin) {
    cols.push_back({"candidate_a", "A candidate", [](R r) { return FieldValue(r.candidate_a); }});
    cols.push_back({"candidate_b", "B candidate", [](R r) { return FieldValue(r.candidate_b); }});
  } else {
    cols.push_back({"best_a", "A best", [](R r) { return text_value(r.candidate_a); }});
    cols.push_back({"best_b", "B best", [](R r) { return text_value(r.candidate_b); }});
  }
  cols.push_back({"a_p20_ms", "A p20 ms", [](R r) { return p20(r.a); }});
  cols.push_back({"a_p50_ms", "A p50 ms", [](R r) { return p50(r.a); }});
  cols.push_back({"a_p80_ms", "A p80 ms", [](R r) { return p80(r.a); }});
  cols.push_back({"b_p20_ms", "B p20 ms", [](R r) { return p20(r.b); }});
  cols.push_back({"b_p50_ms", "B p50 ms", [](R r) { return p50(r.b); }});
  cols.push_back({"b_p80_ms", "B p80 ms", [](R r) { return p80(r.b); }});
  cols.push_back({"ratio", "B/A", [](R r) { return optional_value(r.ratio); }, true});
  cols.push_back({"class", "class", [](R r) {
                    return r.difference ? FieldValue(std::string(to_string(*r.difference))) : FieldValue{};
                  }});
  cols.push_back({"note", "note", [](R r) { return text_value(r.note); }});
  return cols;
}

std::vector<CompareRow> rows_by_problem(const SweepComparison& cmp) {
  std::vector<CompareRow> rows;
  for (const ProblemComparison& c : cmp.problems) {
    CompareRow& r = rows.emplace_back();
    r.problem = c.problem;
    r.pass = c.pass;
    if (c.best_a) r.candidate_a = c.best_a->variant.name, r.a = c.best_a->result;
    if (c.best_b) r.candidate_b = c.best_b->variant.name, r.b = c.best_b->result;
    r.ratio = c.ratio;
    if (c.ratio) r.difference = c.difference;
    r.note = c.note;
  }
  return rows;
}

std::vector<CompareRow> rows_by_candidate(const std::vector<CandidateComparison>& cands) {
  std::vector<CompareRow> rows;
  for (const CandidateComparison& c : cands) {
    CompareRow& r = rows.emplace_back();
    r.problem = c.problem;
    r.pass = c.pass;
    r.candidate_a = c.candidate;
    r.candidate_b = c.candidate_b.empty() ? c.candidate : c.candidate_b;
    r.a = c.a.result;
    r.b = c.b.result;
    r.ratio = c.ratio;
    r.difference = c.difference;
    if (c.difference == Difference::Unclear) r.note = "noise bands overlap partly: repeat with more samples";
  }
  return rows;
}

struct Summary {
  std::size_t rows = 0, compared = 0;
  std::array<std::size_t, 4> classes{};  // indexed by Difference
  std::optional<double> geomean, lowest, highest;
};
Summary summarise(const std::vector<CompareRow>& rows) {
  Summary s;
  s.rows = rows.size();
  std::vector<double> ratios;
  for (const CompareRow& r : rows) {
    if (!r.ratio) continue;
    ++s.compared;
    ++s.classes[static_cast<std::size_t>(*r.difference)];
    ratios.push_back(*r.ratio);
    s.lowest = std::min(s.lowest.value_or(*r.ratio), *r.ratio);
    s.highest = std::max(s.highest.value_or(*r.ratio), *r.ratio);
  }
  s.geomean = geometric_mean(ratios);
  return s;
}

// The two databases' paths when the sweeps come from different files, else empty.
struct Files {
  std::string a, b;
};

// What the rows pair, for the table's header line.
std::string pairing_line(CompareBy by, const PinChoice* pin) {
  switch (by) {
    case CompareBy::Problem: return "by problem: each sweep's fastest Passed result";
    case CompareBy::Candidate: return "by candidate: the same variant and plan pins Passed in both sweeps";
    case CompareBy::Pin: break;
  }
  return "by pin " + std::string(pin->field->name) + "=" + std::to_string(pin->value) +
         ": each candidate of B with the pin against the same candidate without it in A";
}

std::string by_text(CompareBy by) {
  return by == CompareBy::Problem ? "problem" : by == CompareBy::Candidate ? "candidate" : "pin";
}

std::string render_table(const SweepComparison& cmp, const Files& files, CompareBy by, const PinChoice* pin,
                         const std::vector<CompareRow>& rows, const std::vector<Column<CompareRow>>& cols) {
  const Summary s = summarise(rows);
  std::ostringstream o;
  o << "A: " << (files.a.empty() ? "" : files.a + ": ") << sweep_line(cmp.a) << "\n"
    << "B: " << (files.b.empty() ? "" : files.b + ": ") << sweep_line(cmp.b) << "\n"
    << "device differences: " << (cmp.device_differences.empty() ? "none" : cmp.device_differences) << "\n"
    << "build differences: " << (cmp.build_differences.empty() ? "none" : cmp.build_differences) << "\n"
    << pairing_line(by, pin) << "; B/A = B p50 / A p50 (< 1: B faster)\n\n"
    << column_table(rows, cols) << "\n"
    << "rows " << s.rows << ", compared " << s.compared << ": faster " << s.classes[1] << ", slower "
    << s.classes[2] << ", same " << s.classes[0] << ", unclear " << s.classes[3] << "\n";
  if (s.geomean)
    o << "geometric mean of B/A: " << text::fixed(*s.geomean, 4) << " (lowest " << text::fixed(*s.lowest, 4)
      << ", highest " << text::fixed(*s.highest, 4) << ")\n";
  else
    o << "geometric mean of B/A: none (no row measured in both)\n";
  return o.str();
}

std::string render_json(const SweepComparison& cmp, const Files& files, CompareBy by, const PinChoice* pin,
                        const std::vector<CompareRow>& rows, const std::vector<Column<CompareRow>>& cols) {
  const Summary s = summarise(rows);
  text::Json out_rows = text::Json::array();
  for (const CompareRow& r : rows) out_rows.push_back(column_json(r, cols));
  text::Json classes = text::Json::object();
  for (const Difference d : {Difference::Same, Difference::Faster, Difference::Slower, Difference::Unclear})
    classes[std::string(to_string(d))] = s.classes[static_cast<std::size_t>(d)];
  text::Json side_a = sweep_json(cmp.a), side_b = sweep_json(cmp.b);
  if (!files.a.empty()) side_a["database"] = files.a, side_b["database"] = files.b;
  text::Json doc = {
      {"a", std::move(side_a)},
      {"b", std::move(side_b)},
      {"device_differences", cmp.device_differences},
      {"build_differences", cmp.build_differences},
      {"by", by_text(by)},
      {"summary",
       {{"rows", s.rows},
        {"compared", s.compared},
        {"classes", std::move(classes)},
        {"geomean_ratio", text::json_number(s.geomean)},
        {"lowest_ratio", text::json_number(s.lowest)},
        {"highest_ratio", text::json_number(s.highest)}}},
      {"rows", std::move(out_rows)}};
  if (by == CompareBy::Pin) doc["pin"] = {{"field", std::string(pin->field->name)}, {"value", pin->value}};
  return text::dump_json(doc) + "\n";
}

}  // namespace

std::optional<CompareBy> parse_compare_by(std::string_view text) {
  if (text == "problem") return CompareBy::Problem;
  if (text == "candidate") return CompareBy::Candidate;
  if (text == "pin") return CompareBy::Pin;
  return std::nullopt;
}

std::optional<PinChoice> parse_pin_choice(std::string_view text, std::string* error) {
  const std::size_t eq = text.find('=');
  const gdn::PlanField* field = gdn::find_plan_field(text.substr(0, eq), true);
  if (eq == std::string_view::npos || field == nullptr) {
    std::string names;
    for (const gdn::PlanField& f : gdn::kPlanFields)
      names += (names.empty() ? "" : ", ") + std::string(f.name) + " (" + std::string(f.token) + ")";
    *error = "expected FIELD=VALUE with FIELD one of " + names + ", got '" + std::string(text) + "'";
    return std::nullopt;
  }
  const std::string_view value = text.substr(eq + 1);
  int v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || !gdn::plan_field_takes(*field, v)) {
    *error = std::string(field->name) + ": expected " + std::string(field->meaning) + ", got '" + std::string(value) + "'";
    return std::nullopt;
  }
  return PinChoice{field, v};
}

std::string render_comparison(SweepRef a, SweepRef b, CompareBy by, ReportFormat format, const PinChoice* pin) {
  if (by == CompareBy::Pin && (pin == nullptr || pin->field == nullptr))
    throw DbError(DbError::Kind::Invalid, "compare by pin: expected the plan field and value to pair by, got none");
  const SweepComparison cmp = compare_sweeps(a, b);  // throws on an absent sweep
  check_sweep_results(a.db, a.id);
  check_sweep_results(b.db, b.id);
  const std::vector<CompareRow> rows =
      by == CompareBy::Problem ? rows_by_problem(cmp)
      : by == CompareBy::Pin   ? rows_by_candidate(compare_pinned(a, b, *pin->field, pin->value))
                               : rows_by_candidate(compare_candidates(a, b));
  const Files files{&a.db == &b.db ? std::string() : a.db.path(), &a.db == &b.db ? std::string() : b.db.path()};
  const std::vector<Column<CompareRow>> cols = compare_columns(by);
  switch (format) {
    case ReportFormat::Table: return render_table(cmp, files, by, pin, rows, cols);
    case ReportFormat::Csv: return column_csv(rows, cols, true);
    case ReportFormat::Json: return render_json(cmp, files, by, pin, rows, cols);
  }
  return {};
}

}  // namespace gdn::db
