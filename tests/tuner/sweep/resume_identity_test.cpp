// What counts as "the same sweep" for --resume: the canonical identity of the files named
// (not their spelling), never the database's own path (it may be moved), and the content of the
// shape set (a changed file is refused, whatever its name).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {

namespace fs = std::filesystem;

class ResumeIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::canonical(temp_dir("resume")).string();
    fs::create_directories(dir + "/sets");
    fs::create_directories(dir + "/elsewhere");
    fs::copy_file(std::string(GDN_SOURCE_ROOT) + "/scripts/shapes/smoke.csv", dir + "/sets/s.csv");
  }
  void TearDown() override { fs::remove_all(dir); }

  // Starts a sweep into `db` (run from `dir`, relative spellings) that stops after two results:
  // an insert trigger aborts the third, so the sweep is left interrupted, then the trigger goes.
  void interrupted_sweep(const std::string& db) {
    gdn::db::Database::open(dir + "/" + db);
    exec_sql(dir + "/" + db,
             "CREATE TRIGGER gdnlab_test_stop BEFORE INSERT ON results "
             "WHEN (SELECT count(*) FROM results) >= 2 BEGIN SELECT RAISE(ABORT, 'stop here'); END");
    ASSERT_EQ(run_command("cd " + dir + " && " + gdnlab() + " sweep --replay " GDN_BUNDLED_H200_DB
                              " --shapes sets/s.csv --db ./" + db + " --no-progress",
                          out),
              1)
        << out;
    exec_sql(dir + "/" + db, "DROP TRIGGER gdnlab_test_stop");
    ASSERT_EQ(count_results_or_zero(dir + "/" + db), 2u);
  }
  std::string dir, out;
};

}  // namespace

// The same shape set and database named by other spellings (absolute paths, "..", from another
// folder), and the database moved: --resume continues the sweep.
TEST_F(ResumeIdentity, OtherSpellingsAndAMovedDatabaseResume) {
  interrupted_sweep("out.db");
  fs::rename(dir + "/out.db", dir + "/elsewhere/moved.db");
  fs::create_symlink(GDN_BUNDLED_H200_DB, dir + "/recording.sqlite");  // the recording by another name
  ASSERT_EQ(run_command("cd " + dir + "/elsewhere && " + gdnlab() + " sweep --replay ../recording.sqlite"
                            " --shapes ../sets/./s.csv --db " + dir + "/elsewhere/../elsewhere/moved.db"
                            " --no-progress --resume",
                        out),
            0)
      << out;
  EXPECT_NE(out.find("(resumed)"), std::string::npos) << out;
  EXPECT_NE(out.find("2 already stored"), std::string::npos) << out;
  const auto rows = all_results(dir + "/elsewhere/moved.db");
  EXPECT_EQ(by_pair(rows).size(), rows.size()) << "no duplicate pair";
}

// The shape-set file changed since the sweep measured it: --resume refuses, naming the set and
// both content hashes, and writes nothing.
TEST_F(ResumeIdentity, AChangedShapeSetIsRefused) {
  interrupted_sweep("out.db");
  std::stringstream text;
  text << std::ifstream(dir + "/sets/s.csv").rdbuf();
  std::string csv = text.str();
  const auto at = csv.find("one_chunk,1,1,128,128,bf16,packed,64,");
  ASSERT_NE(at, std::string::npos) << csv;
  csv.replace(at, std::string("one_chunk,1,1,128,128,bf16,packed,64,").size(), "one_chunk,1,1,128,128,bf16,packed,96,");
  std::ofstream(dir + "/sets/s.csv", std::ios::trunc) << csv;
  EXPECT_EQ(run_command("cd " + dir + " && " + gdnlab() + " sweep --replay " GDN_BUNDLED_H200_DB
                            " --shapes sets/s.csv --db ./out.db --no-progress --resume",
                        out),
            2)
      << out;
  EXPECT_NE(out.find("--resume: the shape set 's' changed since sweep 1"), std::string::npos) << out;
  EXPECT_EQ(count_results_or_zero(dir + "/out.db"), 2u);
}
