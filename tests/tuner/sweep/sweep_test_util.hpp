// Helpers of the pipeline tests: run gdnlab, read back a results database.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "gdn/db/model.hpp"
#include "recorded_db.hpp"

namespace gdn::tuner::testing {

inline std::string gdnlab() { return GDNLAB_EXE; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `gdnlab <sub> <args> --out <file>`, a command line that must be refused: checks that
// the message names `named` and that no output file is written; returns the exit status (the
// caller checks it) with the output in `out`.
inline int run_refused(const std::string& sub, const std::string& args, const std::string& named,
                       const std::string& file, std::string& out) {
  const int rc = run_command(gdnlab() + " " + sub + " " + args + " --out " + file, out);
  EXPECT_NE(out.find(named), std::string::npos) << args << "\n" << out;
  EXPECT_FALSE(std::filesystem::exists(file)) << args << " wrote an output file";
  return rc;
}

inline std::string replay_sweep_cmd(const RecordedDb& rec, const std::string& out_db, const std::string& extra) {
  return gdnlab() + " sweep --replay " + rec.path + " --db " + out_db + " --no-progress " + extra;
}

#ifdef GDN_FAULT_WORKER_EXE
// The same sweep with the test worker whose fault hooks GDN_TEST_* drive (fault_worker.cpp).
inline std::string fault_sweep_cmd(const RecordedDb& rec, const std::string& out_db, const std::string& extra) {
  return replay_sweep_cmd(rec, out_db, std::string("--worker-exe ") + GDN_FAULT_WORKER_EXE + " " + extra);
}
#endif

inline std::vector<db::ResultRow> all_results(const std::string& path, std::int64_t* sweep_id = nullptr) {
  db::OpenOptions oo;
  oo.create_if_missing = false;
  oo.read_only = true;
  const auto database = db::Database::open(path, oo);
  const auto sweeps = db::list_sweeps(database);
  if (sweeps.empty()) return {};
  db::ResultQuery q;
  q.sweep_id = sweeps.front().sweep.id;
  if (sweep_id) *sweep_id = q.sweep_id;
  return db::query_results(database, q);
}

// Results of the first sweep of `path`; 0 while the file is missing or being created.
inline std::size_t count_results_or_zero(const std::string& path) {
  if (!std::filesystem::exists(path)) return 0;
  try {
    return all_results(path).size();
  } catch (const std::exception&) {
    return 0;
  }
}

using PairKey = std::pair<std::string, int>;  // (variant name, problem row)
inline std::map<PairKey, db::ResultRow> by_pair(const std::vector<db::ResultRow>& rows) {
  std::map<PairKey, db::ResultRow> m;
  for (const auto& r : rows) m.emplace(PairKey{r.variant.name, r.problem.row_index}, r);
  return m;
}

inline int variant_index(const RecordedDb& rec, const std::string& name) {
  for (std::size_t i = 0; i < rec.variants.size(); ++i)
    if (rec.variants[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace gdn::tuner::testing
