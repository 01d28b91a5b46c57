// Integrity checks of stored results (see integrity.hpp).
#include "gdn/db/integrity.hpp"

#include "gdn/text/number.hpp"
#include "statement.hpp"

namespace gdn::db {

namespace {

void check_file(const Database& db) {
  Statement check(db, "PRAGMA quick_check");
  std::string first;
  while (check.step()) {
    const std::string line = check.text(0);
    if (line == "ok") return;
    if (first.empty()) first = line;
  }
  throw DbError(DbError::Kind::NotADatabase,
                "results database '" + db.path() + "' is damaged (SQLite quick_check: " + first + ")");
}

std::string spell(const Statement& s, int col) { return s.is_null(col) ? "none" : text::shortest(s.real(col)); }

}  // namespace

void check_sweep_results(const Database& db, std::int64_t sweep_id) {
  check_file(db);
  // 1e300 stands for "finite": SQLite stores an infinity as a REAL that compares above it.
  Statement bad(db,
                "SELECT r.id, v.name, p.shape_set_name, p.row_index, r.latency_p20_ms, r.latency_p50_ms, "
                "r.latency_p80_ms FROM results r JOIN variants v ON v.id = r.variant_id "
                "JOIN problems p ON p.id = r.problem_id WHERE r.sweep_id = ?1 AND r.outcome = 'Passed' AND ("
                "r.latency_p50_ms IS NULL OR NOT (r.latency_p50_ms > 0 AND r.latency_p50_ms < 1e300) "
                "OR (r.latency_p20_ms IS NOT NULL AND NOT (r.latency_p20_ms > 0 AND r.latency_p20_ms <= r.latency_p50_ms)) "
                "OR (r.latency_p80_ms IS NOT NULL AND NOT (r.latency_p80_ms >= r.latency_p50_ms AND r.latency_p80_ms < 1e300))) "
                "ORDER BY r.id LIMIT 1");
  bad.bind(1, sweep_id);
  if (!bad.step()) return;
  throw DbError(DbError::Kind::Invalid,
                "results database '" + db.path() + "', sweep " + std::to_string(sweep_id) + ": Passed result " +
                    std::to_string(bad.int64(0)) + " (" + bad.text(1) + " on " + bad.text(2) + " row " +
                    std::to_string(bad.int64(3)) + ") has impossible latencies (p20 " + spell(bad, 4) + ", p50 " +
                    spell(bad, 5) + ", p80 " + spell(bad, 6) +
                    " ms; expected 0 < p20 <= p50 <= p80, all finite): the sweep's numbers cannot be trusted");
}

}  // namespace gdn::db
