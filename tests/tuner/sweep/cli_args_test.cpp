// Bad command lines: a clear message naming the argument, a non-zero status, and no database
// file created or touched.
#include <gtest/gtest.h>

#include <filesystem>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {
class CliArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("cli");
    rec = make_recorded_db(dir + "/recorded.db");
    db = dir + "/never.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  // Runs, expects failure, the option named in the output, and no database file.
  void expect_rejected(const std::string& args, const std::string& named) {
    std::string out;
    const int rc = run_command(gdnlab() + " " + args, out);
    EXPECT_NE(rc, 0) << args << "\n" << out;
    EXPECT_NE(out.find(named), std::string::npos) << args << "\n" << out;
    EXPECT_FALSE(std::filesystem::exists(db)) << args << " created the database";
  }
  std::string dir, db;
  RecordedDb rec;
};
}  // namespace

TEST_F(CliArgs, SweepRejectsBadArgumentsWithoutTouchingTheDatabase) {
  const std::string base = "sweep --db " + db + " --replay " + rec.path + " ";
  expect_rejected(base + "--strategy greedy", "--strategy: expected exhaustive, random or halving, got 'greedy'");
  expect_rejected(base + "--metrics lots", "--metrics");
  expect_rejected(base + "--gpus a,b", "--gpus: expected");
  expect_rejected(base + "--strategy random", "--budget");
  expect_rejected(base + "--budget 3", "--budget");
  expect_rejected(base + "--timeout -2", "--timeout");
  expect_rejected(base + "--space /no/such/file", "--space");
  expect_rejected(base + "--variants 'zzz*'", "--variants: no variant");
  expect_rejected(base + "--shapes no_such_set", "--shapes");
  expect_rejected(base + "--halving-eta 1", "--halving-eta");
  expect_rejected(base + "--seed -1", "--seed");
  expect_rejected("sweep --db " + db + " --replay " + dir + "/missing.db", "--replay");
  expect_rejected("sweep --db " + db + " --shapes smoke --replay-sweep 2", "--replay-sweep");
  expect_rejected("sweep --shapes smoke", "--db");
  expect_rejected(base + "--warmup -1", "--warmup: expected >= 0, got -1");
  expect_rejected(base + "--min-samples 0", "--min-samples: expected >= 1, got 0");
  expect_rejected(base + "--max-samples 5", "--max-samples: expected >= --min-samples (50), got 5");
  expect_rejected(base + "--min-samples 30 --max-samples 20", "--max-samples: expected >= --min-samples (30), got 20");
  expect_rejected(base + "--target-spread 0", "--target-spread: expected a finite value > 0");
  expect_rejected(base + "--target-spread abc", "--target-spread");
  expect_rejected(base + "--time-cap-ms -1", "--time-cap-ms: expected a finite value > 0, got -1");
  expect_rejected("sweep --db " + db + " --replay " + rec.path + " --resume", "--resume: expected an existing database");
  expect_rejected("sweep --db " + rec.path + " --replay " + rec.path, "--db: expected a different file");
}

TEST_F(CliArgs, ReportAndExportRejectBadArguments) {
  expect_rejected("report --db " + db, "does not exist");
  expect_rejected("report --db " + rec.path + " --format xml", "--format: expected table, csv or json, got 'xml'");
  expect_rejected("report --db " + rec.path + " --sweep 99", "99");
  expect_rejected("export --db " + db + " --out " + dir + "/t", "does not exist");
  expect_rejected("export --db " + rec.path, "--out");
  expect_rejected("frobnicate", "frobnicate");
}

TEST_F(CliArgs, EverySubcommandHasHelp) {
  for (const char* sub : {"devices", "space", "sweep", "report", "export", "gap", "gui"}) {
    std::string out;
    EXPECT_EQ(run_command(gdnlab() + " " + sub + " --help", out), 0) << sub << "\n" << out;
    EXPECT_NE(out.find("Usage"), std::string::npos) << sub << "\n" << out;
  }
}
