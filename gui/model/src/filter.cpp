#include "gdn/gui/model/filter.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <utility>

namespace gdn::gui::model {
namespace {

// Short names people type; anything else must be a db::FieldInfo::name.
constexpr std::pair<std::string_view, db::Field> kAliases[] = {
    {"name", db::Field::VariantName},
    {"p20", db::Field::LatencyP20},      {"p50", db::Field::LatencyP50},
    {"p80", db::Field::LatencyP80},      {"spread", db::Field::RelSpread},
    {"sm_busy", db::Field::SmBusyPct},   {"tensor", db::Field::TensorPipePct},
    {"dram", db::Field::DramPct},        {"occupancy", db::Field::AchievedOccupancyPct},
    {"regs", db::Field::Registers},      {"spills", db::Field::LocalBytes},
    {"tokens", db::Field::TotalTokens},
    {"overlap", db::Field::PlanPrepareOverlap}, {"split", db::Field::PlanPrepareSplitChunk},
    {"heads", db::Field::PlanPrepareHeads},     {"fixup", db::Field::PlanFixupCols},
    {"local_heads", db::Field::PlanLocalHeads}, {"recompute_cp", db::Field::PlanRecomputeCpChunks},
    {"pass1_beside", db::Field::PlanPass1BesideRecompute}, {"group_sum_beside", db::Field::PlanGroupSumBeside},
};

std::optional<db::Field> resolve_field(std::string_view name) {
  if (auto f = db::parse_field(name)) return f;
  for (const auto& [alias, field] : kAliases)
    if (alias == name) return field;
  return std::nullopt;
}

// Splits on whitespace/commas outside double quotes; quotes are kept for the value parser.
std::vector<std::string> split_clauses(std::string_view text, std::string& error) {
  std::vector<std::string> clauses;
  std::string current;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (std::isspace(static_cast<unsigned char>(c)) || c == ',')) {
      if (!current.empty()) clauses.push_back(std::move(current));
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  if (quoted) error = "unterminated double quote in the filter";
  if (!current.empty()) clauses.push_back(std::move(current));
  return clauses;
}

struct OpToken {
  std::string_view text;
  db::CompareOp op;
};
// Longest first, so "<=" is not read as "<" followed by "=value".
constexpr OpToken kOps[] = {{"==", db::CompareOp::Eq}, {"!=", db::CompareOp::Ne},
                            {"<=", db::CompareOp::Le}, {">=", db::CompareOp::Ge},
                            {"=", db::CompareOp::Eq},  {"<", db::CompareOp::Lt},
                            {">", db::CompareOp::Gt},  {"~", db::CompareOp::Contains}};

std::string unquote(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return std::string(v);
}

// Converts the value text to the field's kind; "" error on success.
std::string typed_value(const db::FieldInfo& info, db::CompareOp op, const std::string& text,
                        bool quoted, db::FieldValue& out) {
  if (!quoted && text == "null") {  // field=null / field!=null: IS NULL / IS NOT NULL
    if (op != db::CompareOp::Eq && op != db::CompareOp::Ne)
      return "null can only be compared with = or !=";
    out = std::monostate{};
    return "";
  }
  if (op == db::CompareOp::Contains) {
    if (info.kind != db::FieldKind::Text)
      return "'~' (contains) needs a text field, and " + std::string(info.name) + " is numeric";
    out = text;
    return "";
  }
  if (info.kind == db::FieldKind::Text) {
    out = text;
    return "";
  }
  if (info.kind == db::FieldKind::Integer) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
      return std::string(info.name) + " expects an integer, got '" + text + "'";
    out = v;
    return "";
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    return std::string(info.name) + " expects a number, got '" + text + "'";
  out = v;
  return "";
}

// SQLite's LIKE '%x%' (what db::query_results uses for Contains) ignores ASCII case.
bool contains_ignoring_ascii_case(std::string_view haystack, std::string_view needle) {
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [&](char a, char b) { return lower(a) == lower(b); });
  return it != haystack.end() || needle.empty();
}

// Three-way compare of two non-NULL values of the same field; numbers compare numerically.
int compare_values(const db::FieldValue& a, const db::FieldValue& b) {
  auto as_number = [](const db::FieldValue& v) -> std::optional<double> {
    if (auto i = std::get_if<std::int64_t>(&v)) return double(*i);
    if (auto d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  const auto na = as_number(a), nb = as_number(b);
  if (na && nb) return *na < *nb ? -1 : (*na > *nb ? 1 : 0);
  if (auto ia = std::get_if<std::int64_t>(&a))
    if (auto ib = std::get_if<std::int64_t>(&b)) return *ia < *ib ? -1 : (*ia > *ib ? 1 : 0);
  const std::string sa = db::format_value(a), sb = db::format_value(b);
  return sa.compare(sb) < 0 ? -1 : (sa.compare(sb) > 0 ? 1 : 0);
}

}  // namespace

ParsedFilter parse_filter(std::string_view text) {
  ParsedFilter parsed;
  const std::vector<std::string> clauses = split_clauses(text, parsed.error);
  if (!parsed.ok()) return parsed;
  for (const std::string& clause : clauses) {
    std::size_t op_pos = std::string::npos;
    const OpToken* op = nullptr;
    for (const OpToken& candidate : kOps) {
      const std::size_t p = clause.find(candidate.text);
      if (p != std::string::npos && p < op_pos) {
        op_pos = p;
        op = &candidate;
      } else if (p != std::string::npos && p == op_pos && candidate.text.size() > op->text.size()) {
        op = &candidate;
      }
    }
    if (op == nullptr) {  // bare word: variant name contains it
      parsed.conditions.push_back({db::Field::VariantName, db::CompareOp::Contains, unquote(clause)});
      continue;
    }
    const std::string field_text = clause.substr(0, op_pos);
    const std::string raw_value = clause.substr(op_pos + op->text.size());
    const bool quoted = raw_value.size() >= 2 && raw_value.front() == '"';
    const std::string value_text = unquote(raw_value);
    const auto field = resolve_field(field_text);
    if (!field) {
      parsed.error = "clause '" + clause + "': unknown field '" + field_text +
                     "' (hover the filter box for the list)";
      return parsed;
    }
    db::Condition condition{*field, op->op, {}};
    if (std::string why = typed_value(db::field_info(*field), op->op, value_text, quoted, condition.value);
        !why.empty()) {
      parsed.error = "clause '" + clause + "': " + why;
      return parsed;
    }
    parsed.conditions.push_back(std::move(condition));
  }
  return parsed;
}

bool matches(const db::ResultRow& row, const db::Condition& condition) {
  const db::FieldValue value = db::field_value(row, condition.field);
  const bool value_null = std::holds_alternative<std::monostate>(value);
  if (std::holds_alternative<std::monostate>(condition.value)) {
    if (condition.op == db::CompareOp::Eq) return value_null;
    if (condition.op == db::CompareOp::Ne) return !value_null;
    return false;
  }
  if (value_null) return false;
  if (condition.op == db::CompareOp::Contains)
    return contains_ignoring_ascii_case(db::format_value(value), db::format_value(condition.value));
  const int c = compare_values(value, condition.value);
  switch (condition.op) {
    case db::CompareOp::Eq: return c == 0;
    case db::CompareOp::Ne: return c != 0;
    case db::CompareOp::Lt: return c < 0;
    case db::CompareOp::Le: return c <= 0;
    case db::CompareOp::Gt: return c > 0;
    case db::CompareOp::Ge: return c >= 0;
    case db::CompareOp::Contains: break;
  }
  return false;
}

bool matches_all(const db::ResultRow& row, std::span<const db::Condition> conditions) {
  return std::all_of(conditions.begin(), conditions.end(),
                     [&](const db::Condition& c) { return matches(row, c); });
}

std::string filter_help() {
  std::string help =
      "Clauses separated by spaces: field op value, op one of = != < <= > >= ~ (contains).\n"
      "A bare word filters variant names; field=null / field!=null test for missing values.\n"
      "Example: block_v=64 outcome=Passed p50<0.5 fused\nFields:";
  int column = 0;
  for (const db::FieldInfo& info : db::all_fields()) {
    help += (column++ % 6 == 0) ? "\n  " : " ";
    help += info.name;
  }
  help += "\nAliases:";
  for (const auto& [alias, field] : kAliases) help += " " + std::string(alias);
  return help;
}

}  // namespace gdn::gui::model
