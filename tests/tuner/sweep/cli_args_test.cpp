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
  // Runs, expects the usage status (2, whichever subcommand and whichever check refused it),
  // the option named in the output, and no database file.
  void expect_rejected(const std::string& args, const std::string& named) {
    std::string out;
    const int rc = run_command(gdnlab() + " " + args, out);
    EXPECT_EQ(rc, 2) << args << "\n" << out;
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
  expect_rejected("frobnicate", "expected devices, space, sweep, merge, report, export, gap, compare or gui");
  expect_rejected("gap --db " + db + " --table-sweep 1", "does not exist");
  expect_rejected("report --db " + rec.path + " --no-such-option", "--no-such-option");
  expect_rejected("export --db " + rec.path + " --out " + dir + "/t --sweep 0", "--sweep");
  expect_rejected("gap --db " + rec.path, "--table-sweep");
}

// Numbers are bounded by what the code represents, in the project's words: no silently
// saturated integer, no 309-digit range, no deadline that overflows into a false Timeout.
TEST_F(CliArgs, NumericOptionsAreBoundedWithClearMessages) {
  const std::string base = "sweep --db " + db + " --replay " + rec.path + " ";
  expect_rejected(base + "--timeout 1e10", "--timeout: expected seconds > 0 and at most 604800 (a week), got 10000000000");
  expect_rejected(base + "--gate-timeout 1e10", "--gate-timeout: expected seconds > 0 and at most 604800");
  expect_rejected(base + "--timeout inf", "--timeout: expected a finite number, got 'inf'");
  expect_rejected(base + "--seed 99999999999999999999",
                  "--seed: expected an integer from 0 to 9223372036854775807, got '99999999999999999999'");
  expect_rejected(base + "--budget -1", "--budget: expected an integer from 0 to");
  expect_rejected(base + "--warmup 99999999999", "--warmup: expected an integer from -2147483648 to 2147483647");
  expect_rejected(base + "--halving-eta 17", "--halving-eta: expected an integer from 2 to 16, got '17'");
  expect_rejected(base + "--replay-sweep 0", "--replay-sweep: expected an integer from 1 to");
  expect_rejected("report --db " + rec.path + " --sweep 1e3", "--sweep: expected an integer from 1 to");
  std::string out;
  run_command(gdnlab() + " " + base + "--seed -1", out);
  EXPECT_EQ(out.find("1.79769"), std::string::npos) << "CLI11's double range leaked: " << out;
}

// An empty value given on purpose is refused naming its option (it used to read as absent,
// and `--replay ""` then blamed --gpus).
TEST_F(CliArgs, EmptyValuesAreRefusedNamingTheirOption) {
  expect_rejected("sweep --db " + db + " --replay '' --shapes smoke", "--replay: expected a non-empty value, got ''");
  expect_rejected("sweep --db " + db + " --replay " + rec.path + " --shapes ''", "--shapes: expected a non-empty value");
  expect_rejected("sweep --db '' --replay " + rec.path, "--db");
}

TEST_F(CliArgs, EverySubcommandHasHelp) {
  for (const char* sub : {"devices", "space", "sweep", "report", "compare", "export", "gap", "gui"}) {
    std::string out;
    EXPECT_EQ(run_command(gdnlab() + " " + sub + " --help", out), 0) << sub << "\n" << out;
    EXPECT_NE(out.find("Usage"), std::string::npos) << sub << "\n" << out;
  }
}
