// `gdnlab gap` end to end: on the bundled H200 sweep, on two replayed sweeps of one database
// (the table from a full-protocol sweep, measured by a short-protocol one), and its errors,
// which exit non-zero and write no output file.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "gdn/db/writer.hpp"
#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {
const std::string kBundled = GDN_BUNDLED_H200_DB;

class GapCli : public ::testing::Test {
 protected:
  void SetUp() override { dir = temp_dir("gap"); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void expect_rejected(const std::string& args, const std::string& named) {
    const int rc = run_refused("gap", args, named, dir + "/gap.out", out);
    EXPECT_NE(rc, 0) << args << "\n" << out;
  }
  std::string dir, out;
};
}  // namespace

TEST_F(GapCli, BundledSweepAgainstItself) {
  ASSERT_EQ(run_command(gdnlab() + " gap --db " + kBundled + " --table-sweep 1", out), 0) << out;
  EXPECT_NE(out.find("table:    sweep 1"), std::string::npos) << out;
  EXPECT_NE(out.find("measured: sweep 1"), std::string::npos) << out;
  EXPECT_NE(out.find("NVIDIA H200"), std::string::npos) << out;
  EXPECT_NE(out.find("with the pick measured"), std::string::npos) << out;
  EXPECT_NE(out.find("(oracle gap "), std::string::npos) << out;
  EXPECT_NE(out.find("default rule"), std::string::npos) << out;
}

TEST_F(GapCli, TableOfOneSweepMeasuredByAnotherIntoAFile) {
  const std::string db = dir + "/two.db";
  const std::string replay = gdnlab() + " sweep --replay " + kBundled + " --shapes smoke --db " + db + " --no-progress ";
  ASSERT_EQ(run_command(replay, out), 0) << out;
  ASSERT_EQ(run_command(replay + "--min-samples 10 --max-samples 20 --target-spread 0.5", out), 0) << out;
  const std::string file = dir + "/gap.json";
  ASSERT_EQ(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1 --sweep 2 --format json --out " + file, out),
            0) << out;
  EXPECT_NE(out.find("wrote " + file), std::string::npos) << out;
  const std::string json = read_file(file);
  const auto doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc["table_sweep"]["id"], 1) << json;
  EXPECT_EQ(doc["measured_sweep"]["id"], 2) << json;
  EXPECT_EQ(doc["summary"]["default_rule_rows"], 0) << json;
  for (const auto& r : doc["rows"]) EXPECT_FALSE(r["ratio"].is_null()) << json;  // every pick measured

  ASSERT_EQ(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1 --sweep 2 --format csv", out), 0) << out;
  EXPECT_EQ(out.rfind("shape_set,row_index,h_qk,h_v,", 0), 0u) << out;
}

TEST_F(GapCli, ErrorsExitNonZeroAndWriteNothing) {
  expect_rejected("--db " + kBundled + " --table-sweep 99", "99");
  expect_rejected("--db " + kBundled + " --table-sweep 1 --sweep 98", "98");
  expect_rejected("--db " + kBundled + " --table-sweep 1 --format xml",
                  "--format: expected table, csv or json, got 'xml'");
  expect_rejected("--db " + dir + "/missing.db --table-sweep 1", "does not exist");
  expect_rejected("--db " + kBundled, "--table-sweep");
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing.db"));

  // A copy of the bundled database with a second sweep whose only forward result failed: no
  // table from it, and nothing to measure a table with.
  const std::string db = dir + "/failed.db";
  std::filesystem::copy_file(kBundled, db);
  {
    auto database = gdn::db::Database::open(db, {.create_if_missing = false});
    const auto first = gdn::db::list_sweeps(database).front();
    gdn::db::ResultQuery q;
    q.sweep_id = first.sweep.id;
    q.conditions.push_back({gdn::db::Field::Pass, gdn::db::CompareOp::Eq, std::string("fwd")});
    const auto some = gdn::db::query_results(database, q).front();
    gdn::db::ResultsWriter w(database);
    gdn::db::SweepRecord sweep = first.sweep;
    sweep.id = 0;
    sweep.args = "failed sweep (test)";
    gdn::db::ResultRecord r;
    r.sweep_id = w.begin_sweep(sweep);
    r.variant_id = some.variant.id;
    r.problem_id = some.problem.id;
    r.outcome = gdn::db::Outcome::Incorrect;
    r.message = "o rel rms 0.5";
    w.insert_result(r, {});
    w.set_sweep_status(r.sweep_id, gdn::db::SweepStatus::Finished);
  }
  expect_rejected("--db " + db + " --table-sweep 1 --sweep 2", "measured sweep 2 has no forward problem with a Passed");
  expect_rejected("--db " + db + " --table-sweep 2", "table sweep 2 has no bucket where one forward variant passed");
}
