// Export from the bundled H200 sweep database (tests/data/smoke_h200.sqlite, on a copy: the
// bundled file is never opened for writing). The expected winners are recomputed here from the
// raw result rows with plain SQL, not taken from the selection code under test and not
// hard-coded. Errors for databases without passing results or of a foreign schema are covered
// by test_export.cpp (ExportErrors).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "db_fixture.hpp"
#include "gdn/db/export.hpp"

namespace gdn::db::test {
namespace {

namespace dsp = gdn::dispatch;
namespace fs = std::filesystem;

const char* kBundled = "tests/data/smoke_h200.sqlite";  // ctest runs in the repository root

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One forward result row of the latest sweep with a Passed result.
struct RawRow {
  dsp::BucketKey key;
  std::int64_t problem_id;
  std::string variant;
  bool passed;
  double p20, p50, p80;
};

std::int64_t latest_sweep_with_passes(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT max(sweep_id) FROM results WHERE outcome = 'Passed'", -1,
                               &st, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const std::int64_t id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return id;
}

std::vector<RawRow> forward_rows(sqlite3* db, std::int64_t sweep) {
  const char* sql =
      "SELECT p.id, p.h_qk, p.h_v, p.k, p.v, p.dtype, p.num_seqs, p.total_tokens, p.max_seqlen,"
      " v.name, r.outcome = 'Passed', r.latency_p20_ms, r.latency_p50_ms, r.latency_p80_ms"
      " FROM results r JOIN variants v ON v.id = r.variant_id JOIN problems p ON p.id = "
      "r.problem_id"
      " WHERE r.sweep_id = ? AND v.pass = 'fwd'";
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_bind_int64(st, 1, sweep);
  std::vector<RawRow> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const std::string dtype = reinterpret_cast<const char*>(sqlite3_column_text(st, 5));
    dsp::Shape s;
    s.h_qk = sqlite3_column_int(st, 1);
    s.h_v = sqlite3_column_int(st, 2);
    s.k = sqlite3_column_int(st, 3);
    s.v = sqlite3_column_int(st, 4);
    s.dtype = dtype == "bf16"   ? dsp::DType::BF16
              : dtype == "fp16" ? dsp::DType::FP16
                                : dsp::DType::FP32;
    s.num_seqs = sqlite3_column_int64(st, 6);
    s.total_tokens = sqlite3_column_int64(st, 7);
    s.max_seqlen = sqlite3_column_int64(st, 8);
    rows.push_back(RawRow{dsp::bucket_of(s), sqlite3_column_int64(st, 0),
                          reinterpret_cast<const char*>(sqlite3_column_text(st, 9)),
                          sqlite3_column_int(st, 10) != 0, sqlite3_column_double(st, 11),
                          sqlite3_column_double(st, 12), sqlite3_column_double(st, 13)});
  }
  sqlite3_finalize(st);
  return rows;
}

// Per bucket: geometric-mean p50 of each variant that passed every problem of the bucket,
// and the largest (p80 - p20) / p50 of its results.
struct Expected {
  std::map<std::string, double> score;
  std::map<std::string, double> noise;
  std::string fastest;
};

std::map<dsp::BucketKey, Expected> expected_buckets(const std::vector<RawRow>& rows) {
  std::map<dsp::BucketKey, std::set<std::int64_t>> problems;
  std::map<dsp::BucketKey, std::map<std::string, std::vector<const RawRow*>>> passed;
  for (const RawRow& r : rows) {
    problems[r.key].insert(r.problem_id);
    if (r.passed) passed[r.key][r.variant].push_back(&r);
  }
  std::map<dsp::BucketKey, Expected> out;
  for (const auto& [key, by_variant] : passed) {
    Expected e;
    for (const auto& [variant, results] : by_variant) {
      if (results.size() != problems[key].size()) continue;  // not eligible
      double log_sum = 0, noise = 0;
      for (const RawRow* r : results) {
        log_sum += std::log(r->p50);
        noise = std::max(noise, (r->p80 - r->p20) / r->p50);
      }
      e.score[variant] = std::exp(log_sum / results.size());
      e.noise[variant] = noise;
      if (e.fastest.empty() || e.score[variant] < e.score[e.fastest]) e.fastest = variant;
    }
    if (!e.fastest.empty()) out[key] = e;
  }
  return out;
}

TEST(ExportBundled, WinnersMatchTheRawResultRows) {
  ScratchDir dir;
  const std::string copy = dir.file("smoke_h200.sqlite");
  ASSERT_TRUE(fs::exists(kBundled)) << "run from the repository root";
  fs::copy_file(kBundled, copy);
  const Database db = Database::open(copy, OpenOptions{.create_if_missing = false});

  const std::int64_t sweep = latest_sweep_with_passes(db.handle());
  const auto expected = expected_buckets(forward_rows(db.handle(), sweep));
  ASSERT_FALSE(expected.empty()) << "the bundled database has no passing forward result";

  const ExportResult result = export_dispatch(db, ExportOptions{.out_dir = dir.path() / "out"});
  const std::vector<dsp::Entry> entries = dispatch_entries(result.selection);
  ASSERT_EQ(entries.size(), expected.size());
  std::set<std::string> winners;
  for (const dsp::Entry& e : entries) {
    const auto it = expected.find(e.key);
    ASSERT_NE(it, expected.end()) << describe_bucket(e.key) << " is not a measured bucket";
    const Expected& x = it->second;
    const std::string variant(e.variant);
    ASSERT_TRUE(x.score.count(variant))
        << variant << " did not pass every problem of " << describe_bucket(e.key);
    if (e.margin >= 0) {
      EXPECT_EQ(variant, x.fastest) << describe_bucket(e.key);
    } else {  // the near-tie rule picked a slower variant: only within the measured noise
      const double noise = std::max(x.noise.at(variant), x.noise.at(x.fastest));
      EXPECT_LE(x.score.at(variant), x.score.at(x.fastest) * (1 + noise)) << describe_bucket(e.key);
    }
    winners.insert(variant);
  }

  const std::string header = read_text(result.header_path);
  EXPECT_NE(header.find("from sweep " + std::to_string(sweep)), std::string::npos);
  for (const std::string& w : winners) EXPECT_NE(header.find('"' + w + '"'), std::string::npos);
  const std::vector<std::string> used = result.selection.variants_used();
  EXPECT_EQ(std::set<std::string>(used.begin(), used.end()), winners);
  EXPECT_TRUE(fs::exists(result.json_path));
}

}  // namespace
}  // namespace gdn::db::test
