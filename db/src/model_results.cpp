// Results queries: filter, sort, page; samples and PM timelines; best per problem.
#include <algorithm>
#include <map>

#include "fields_sql.hpp"
#include "gdn/db/model.hpp"
#include "result_rows.hpp"
#include "row_codec.hpp"

namespace gdn::db {

namespace {

[[noreturn]] void bad_condition(std::size_t index, const FieldInfo& info, const std::string& why) {
  throw DbError(DbError::Kind::Invalid, "conditions[" + std::to_string(index) + "] on field '" +
                                            std::string(info.name) + "': " + why);
}

std::string_view op_sql(CompareOp op) {
  switch (op) {
    case CompareOp::Eq: return "=";
    case CompareOp::Ne: return "<>";
    case CompareOp::Lt: return "<";
    case CompareOp::Le: return "<=";
    case CompareOp::Gt: return ">";
    case CompareOp::Ge: return ">=";
    case CompareOp::Contains: return "LIKE";
  }
  return "=";
}

std::string_view kind_name(const FieldValue& v) {
  if (std::holds_alternative<std::int64_t>(v)) return "an integer";
  if (std::holds_alternative<double>(v)) return "a real";
  if (std::holds_alternative<std::string>(v)) return "a text";
  return "NULL";
}

// WHERE clause (after the sweep condition) and the values to bind, in order.
struct WhereClause {
  std::string sql;
  std::vector<FieldValue> values;
};

WhereClause build_where(const ResultQuery& q) {
  if (q.sweep_id <= 0)
    throw DbError(DbError::Kind::Invalid,
                  "query.sweep_id: expected the id of a sweep (> 0), got " + std::to_string(q.sweep_id));
  WhereClause w{"r.sweep_id = ?", {FieldValue(q.sweep_id)}};
  for (std::size_t i = 0; i < q.conditions.size(); ++i) {
    const Condition& c = q.conditions[i];
    const FieldInfo& info = field_info(c.field);
    const std::string column(field_sql(c.field));
    const bool is_null = std::holds_alternative<std::monostate>(c.value);
    const bool is_text = std::holds_alternative<std::string>(c.value);
    if (is_null) {
      if (c.op != CompareOp::Eq && c.op != CompareOp::Ne)
        bad_condition(i, info, "NULL can only be compared with Eq or Ne");
      w.sql += " AND " + column + (c.op == CompareOp::Eq ? " IS NULL" : " IS NOT NULL");
      continue;
    }
    if (c.op == CompareOp::Contains) {
      if (info.kind != FieldKind::Text || !is_text)
        bad_condition(i, info, "Contains needs a text field and a text value, got " +
                                   std::string(kind_name(c.value)));
      w.sql += " AND " + column + " LIKE '%' || ? || '%'";
      w.values.push_back(c.value);
      continue;
    }
    if ((info.kind == FieldKind::Text) != is_text)
      bad_condition(i, info,
                    std::string("expected ") + (info.kind == FieldKind::Text ? "a text" : "a number") +
                        " value, got " + std::string(kind_name(c.value)));
    w.sql += " AND " + column + " " + std::string(op_sql(c.op)) + " ?";
    w.values.push_back(c.value);
  }
  return w;
}

void bind_values(Statement& s, const std::vector<FieldValue>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (const auto* v = std::get_if<std::int64_t>(&values[i])) s.bind(index, *v);
    else if (const auto* d = std::get_if<double>(&values[i])) s.bind(index, *d);
    else if (const auto* t = std::get_if<std::string>(&values[i])) s.bind(index, *t);
    else s.bind_null(index);
  }
}

constexpr const char* kFromJoin =
    " FROM results r JOIN variants vr ON vr.id = r.variant_id"
    " JOIN problems p ON p.id = r.problem_id";

}  // namespace

std::string result_row_select() {
  return "SELECT " + prefixed("r", kResultColumns) + ", " + prefixed("vr", kVariantColumns) +
         ", " + prefixed("p", kProblemColumns) + kFromJoin;
}

ResultRow read_result_row(const Statement& s) {
  constexpr int kResultN = column_count(kResultColumns);
  constexpr int kVariantN = column_count(kVariantColumns);
  return ResultRow{read_result(s, 0), read_variant(s, kResultN),
                   read_problem(s, kResultN + kVariantN)};
}

std::vector<ResultRow> all_results_of_sweep(const Database& db, std::int64_t sweep_id) {
  Statement s(db, result_row_select() +
                      " WHERE r.sweep_id = ?1 ORDER BY p.shape_set_name, p.row_index, p.id, "
                      "vr.pass, r.latency_p50_ms IS NULL, r.latency_p50_ms, vr.name");
  s.bind(1, sweep_id);
  std::vector<ResultRow> rows;
  while (s.step()) rows.push_back(read_result_row(s));
  return rows;
}

std::vector<ResultRow> query_results(const Database& db, const ResultQuery& q) {
  const WhereClause where = build_where(q);
  std::string sql = result_row_select() + " WHERE " + where.sql + " ORDER BY ";
  for (const SortKey& k : q.sort)
    sql += std::string(field_sql(k.field)) + (k.descending ? " DESC" : " ASC") + " NULLS LAST, ";
  sql += "r.id";
  if (q.limit >= 0) sql += " LIMIT " + std::to_string(q.limit);
  if (q.offset > 0) sql += (q.limit >= 0 ? "" : " LIMIT -1") + std::string(" OFFSET ") + std::to_string(q.offset);
  Statement s(db, sql);
  bind_values(s, where.values);
  std::vector<ResultRow> rows;
  while (s.step()) rows.push_back(read_result_row(s));
  return rows;
}

std::int64_t count_results(const Database& db, const ResultQuery& q) {
  const WhereClause where = build_where(q);
  Statement s(db, std::string("SELECT count(*)") + kFromJoin + " WHERE " + where.sql);
  bind_values(s, where.values);
  s.step();
  return s.int64(0);
}

std::optional<ResultRow> result_by_id(const Database& db, std::int64_t result_id) {
  Statement s(db, result_row_select() + " WHERE r.id = ?1");
  s.bind(1, result_id);
  if (!s.step()) return std::nullopt;
  return read_result_row(s);
}

std::vector<double> samples_of(const Database& db, std::int64_t result_id) {
  Statement s(db, "SELECT ms FROM samples WHERE result_id = ?1 ORDER BY idx");
  s.bind(1, result_id);
  std::vector<double> out;
  while (s.step()) out.push_back(s.real(0));
  return out;
}

std::vector<PmSample> pm_timeline_of(const Database& db, std::int64_t result_id) {
  Statement s(db, "SELECT " + std::string(kPmColumns) + " FROM pm_samples WHERE result_id = ?1 ORDER BY idx");
  s.bind(1, result_id);
  std::vector<PmSample> out;
  while (s.step()) out.push_back(read_pm_sample(s, 0));
  return out;
}

std::vector<ProblemBest> best_per_problem(const Database& db, std::int64_t sweep_id) {
  sweep_summary(db, sweep_id);  // throws a clear error for an unknown sweep
  std::vector<ProblemBest> out;
  // Rows arrive grouped by problem then pass, fastest Passed first within a group.
  for (ResultRow& row : all_results_of_sweep(db, sweep_id)) {
    if (out.empty() || out.back().problem.id != row.problem.id || out.back().pass != row.variant.pass) {
      out.push_back(ProblemBest{row.problem, row.variant.pass, {}, {}, {}, {}});
    }
    ProblemBest& pb = out.back();
    ++pb.outcome_counts[static_cast<std::size_t>(row.result.outcome)];
    if (row.result.outcome != Outcome::Passed) continue;
    if (!pb.best) pb.best = std::move(row);
    else if (!pb.runner_up) pb.runner_up = std::move(row);
  }
  for (ProblemBest& pb : out)
    if (pb.best && pb.runner_up)
      pb.margin = *pb.runner_up->result.latency_p50_ms / *pb.best->result.latency_p50_ms - 1.0;
  return out;
}

}  // namespace gdn::db
