// Builds gdnlab results databases programmatically through the db library's own writer, for the
// dashboard's model tests, the headless render tests and the 100k-result frame-time check.
// Latencies are synthetic but structured (they depend on the config and the problem size) so
// plots, winners and comparisons have something real to show; nothing here pretends to be a
// measurement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/records.hpp"

namespace gdn::gui::testing {

struct TestDbSpec {
  int variants = 12;          // distinct kernel configs (fused and staged)
  int problems = 6;           // shapes in the shape set
  int samples = 24;           // timing samples per passed result
  int sweeps = 2;             // sweep 2 runs on a different build, ~5% faster on big shapes
  bool with_failures = true;  // some Incorrect / Crashed / Unsupported results
  bool with_pm_timeline = true;
  bool finish_sweeps = true;  // false: the last sweep stays Running (live refresh tests)
};

struct TestDbIds {
  std::vector<std::int64_t> sweeps;
  std::vector<std::int64_t> variants;
  std::vector<std::int64_t> problems;
  std::int64_t results = 0;
};

// Creates (or overwrites) `path` and fills it per `spec`.
TestDbIds make_test_db(const std::string& path, const TestDbSpec& spec);

// The i-th config of the synthetic space (valid by gdn::check_config) and a unique name.
gdn::KernelConfig test_config(int i);
std::string test_variant_name(const gdn::KernelConfig& c, int i);

// Synthetic p50 (ms) of config i on problem j: smooth in the fields, so heatmaps have shape.
double synthetic_latency_ms(int variant_index, const db::ProblemRecord& problem, int sweep_index);

// Registers problem row `row_index` of the synthetic shape set (live-refresh tests).
std::int64_t register_test_problem(db::Database& db, int row_index);

// One more Passed result into an existing sweep (live-refresh tests), returns its id.
std::int64_t append_result(db::Database& db, std::int64_t sweep_id, std::int64_t variant_id,
                           std::int64_t problem_id, double p50_ms);

// An SQLite file that is not a gdnlab database, and a file that is not SQLite at all.
void make_foreign_sqlite(const std::string& path);
void make_corrupt_file(const std::string& path);

}  // namespace gdn::gui::testing
