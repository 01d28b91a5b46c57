// `gdnlab compare` end to end: two replayed sweeps of the bundled H200 recording in one
// database (a full-protocol sweep and a short-protocol re-measurement, as two builds would be
// swept), by problem and by candidate in each format, and its errors, which exit with the
// usage status and write no output file.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {
const std::string kBundled = GDN_BUNDLED_H200_DB;

// Passed results with a median in the recording's sweep: the candidates both replays pair.
std::size_t passed_count(const std::string& path) {
  std::size_t n = 0;
  for (const auto& r : all_results(path))
    n += r.result.outcome == gdn::db::Outcome::Passed && r.result.latency_p50_ms ? 1 : 0;
  return n;
}

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("compare");
    db = dir + "/two.db";
    const std::string replay = gdnlab() + " sweep --replay " + kBundled + " --shapes smoke --db " + db + " --no-progress ";
    ASSERT_EQ(run_command(replay, out), 0) << out;
    ASSERT_EQ(run_command(replay + "--min-samples 10 --max-samples 20 --target-spread 0.5", out), 0) << out;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void expect_rejected(const std::string& args, const std::string& named) {
    const int rc = run_refused("compare", args, named, dir + "/compare.out", out);
    EXPECT_EQ(rc, 2) << args << "\n" << out;
  }
  std::string dir, db, out;
};
}  // namespace

TEST_F(CompareCli, ByProblemAsATableStatesBothSweepsAndSummarises) {
  ASSERT_EQ(run_command(gdnlab() + " compare --db " + db + " --sweep 1 --against 2", out), 0) << out;
  EXPECT_NE(out.find("A: sweep 1"), std::string::npos) << out;
  EXPECT_NE(out.find("B: sweep 2"), std::string::npos) << out;
  EXPECT_NE(out.find("NVIDIA H200"), std::string::npos) << out;
  EXPECT_NE(out.find("device differences: none"), std::string::npos) << out;
  EXPECT_NE(out.find("by problem"), std::string::npos) << out;
  EXPECT_NE(out.find("geometric mean of B/A: "), std::string::npos) << out;
}

TEST_F(CompareCli, ByCandidatePairsEveryReplayedCandidateIntoAFile) {
  const std::string file = dir + "/cmp.json";
  ASSERT_EQ(run_command(gdnlab() + " compare --db " + db + " --sweep 1 --against 2 --by candidate --format json --out " +
                            file, out), 0) << out;
  EXPECT_NE(out.find("wrote " + file), std::string::npos) << out;
  const std::string json = read_file(file);
  const auto doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc["a"]["id"], 1) << json;
  EXPECT_EQ(doc["b"]["id"], 2) << json;
  EXPECT_EQ(doc["by"], "candidate");
  // The same recording replayed twice: every Passed candidate in both, each ratio present.
  const std::size_t passed = passed_count(kBundled);
  EXPECT_EQ(doc["rows"].size(), passed) << json;
  EXPECT_EQ(doc["summary"]["compared"], passed) << json;
  for (const auto& r : doc["rows"]) {
    EXPECT_FALSE(r["ratio"].is_null()) << json;
    EXPECT_EQ(r["candidate"].get<std::string>().rfind("gdn_", 0), 0u) << json;
  }
  ASSERT_EQ(run_command(gdnlab() + " compare --db " + db + " --sweep 2 --against 1 --by candidate --format csv", out),
            0) << out;
  EXPECT_EQ(out.rfind("shape_set,row_index,pass,h_qk,h_v,num_seqs,total_tokens,seqlens,candidate,", 0), 0u) << out;
}

TEST_F(CompareCli, SweepsOfTwoDatabasesCompareAndNameTheirFiles) {
  const std::string other = dir + "/other.db";
  ASSERT_EQ(run_command(gdnlab() + " sweep --replay " + kBundled + " --shapes smoke --db " + other +
                            " --no-progress --min-samples 10 --max-samples 20 --target-spread 0.5", out), 0) << out;
  // Sweep 1 of each file: the same id, different databases.
  ASSERT_EQ(run_command(gdnlab() + " compare --db " + db + " --sweep 1 --against 1 --against-db " + other +
                            " --by candidate", out), 0) << out;
  EXPECT_NE(out.find("A: " + db + ": sweep 1"), std::string::npos) << out;
  EXPECT_NE(out.find("B: " + other + ": sweep 1"), std::string::npos) << out;
  EXPECT_NE(out.find("geometric mean of B/A: "), std::string::npos) << out;
  ASSERT_EQ(run_command(gdnlab() + " compare --db " + db + " --sweep 1 --against 1 --against-db " + other +
                            " --format json", out), 0) << out;
  const auto doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["a"]["database"], db);
  EXPECT_EQ(doc["b"]["database"], other);
  // The same file named twice is one database: sweep 1 against itself is refused.
  expect_rejected("--db " + db + " --sweep 1 --against 1 --against-db " + db, "--against: expected a sweep other");
  expect_rejected("--db " + db + " --sweep 1 --against 1 --against-db " + dir + "/missing.db", "does not exist");
}

TEST_F(CompareCli, ErrorsExitWithTheUsageStatusAndWriteNothing) {
  expect_rejected("--db " + db + " --sweep 1 --against 1", "--against: expected a sweep other than --sweep 1");
  expect_rejected("--db " + db + " --sweep 1 --against 9", "9");
  expect_rejected("--db " + db + " --sweep 1 --against 2 --by variant", "--by: expected problem, candidate or pin, got 'variant'");
  // By pin: the pin named and valid, only with --by pin; the same sweep then allowed.
  expect_rejected("--db " + db + " --sweep 1 --against 1 --by pin", "--pin: expected FIELD=VALUE with FIELD one of");
  expect_rejected("--db " + db + " --sweep 1 --against 1 --by pin --pin gb=3",
                  "--pin: group_sum_beside: expected 0 or 1");
  expect_rejected("--db " + db + " --sweep 1 --against 2 --pin pb=1", "--pin: expected only with --by pin, got --by problem");
  ASSERT_EQ(run_command(gdnlab() + " compare --db " + db + " --sweep 1 --against 1 --by pin --pin pb=1", out), 0) << out;
  EXPECT_NE(out.find("by pin pass1_beside_recompute=1"), std::string::npos) << out;
  EXPECT_NE(out.find("rows 0, compared 0"), std::string::npos) << out;  // no candidate pins it here
  expect_rejected("--db " + db + " --sweep 1 --against 2 --format xml", "--format: expected table, csv or json, got 'xml'");
  expect_rejected("--db " + dir + "/missing.db --sweep 1 --against 2", "does not exist");
  expect_rejected("--db " + db + " --sweep 1", "--against");
  expect_rejected("--db " + db + " --sweep 0 --against 2", "--sweep");
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing.db"));
  const int rc = run_command(gdnlab() + " compare --db " + db + " --sweep 1 --against 2 --out " + dir, out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--out: expected a file path, got the directory"), std::string::npos) << out;
}
