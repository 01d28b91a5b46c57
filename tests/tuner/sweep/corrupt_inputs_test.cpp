// Hostile databases given to the read side of the lab: a recording with impossible latencies or
// a damaged file (refused before replay, report, export or gap use a number of it), text that is
// not UTF-8 (report's JSON stays valid), and sweeps that did not finish (used by export and gap
// only when asked, and then marked partial).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {

namespace fs = std::filesystem;

class CorruptInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("corrupt");
    rec = make_recorded_db(dir + "/recorded.db");
  }
  void TearDown() override { fs::remove_all(dir); }
  // A copy of the bundled H200 recording, to damage or edit.
  std::string bundled_copy(const std::string& name) {
    const std::string path = dir + "/" + name;
    fs::copy_file(GDN_BUNDLED_H200_DB, path);
    return path;
  }
  std::string dir, out;
  RecordedDb rec;
};

}  // namespace

// A recorded p20 of 2.7e+268 ms (a damaged row) used to be replayed, reported and exported as
// if measured. Every reader now refuses the sweep, naming the result, with the usage status.
TEST_F(CorruptInputs, ImpossibleLatenciesAreRefusedByEveryReader) {
  const std::string bad = bundled_copy("bad.db");
  exec_sql(bad,
           "UPDATE results SET latency_p20_ms = 2.7e268 WHERE id = "
           "(SELECT min(id) FROM results WHERE outcome = 'Passed')");
  const std::string replayed = dir + "/replayed.db";
  EXPECT_EQ(run_command(gdnlab() + " sweep --replay " + bad + " --db " + replayed + " --no-progress", out), 2) << out;
  EXPECT_NE(out.find("impossible latencies"), std::string::npos) << out;
  EXPECT_NE(out.find("p20 2.7e+268"), std::string::npos) << out;
  EXPECT_EQ(count_results_or_zero(replayed), 0u) << "nothing of a corrupt recording is committed";

  EXPECT_EQ(run_command(gdnlab() + " report --db " + bad, out), 2) << out;
  EXPECT_NE(out.find("impossible latencies"), std::string::npos) << out;
  EXPECT_EQ(out.find("2.7e+268 "), std::string::npos) << "printed as a measurement: " << out;
  EXPECT_EQ(run_command(gdnlab() + " export --db " + bad + " --out " + dir + "/table", out), 2) << out;
  EXPECT_FALSE(fs::exists(dir + "/table/dispatch.json"));
  EXPECT_EQ(run_command(gdnlab() + " gap --db " + bad + " --table-sweep 1", out), 2) << out;

  // A p50 <= 0 (what used to make the coordinator spin) is refused the same way.
  const std::string negative = bundled_copy("negative.db");
  exec_sql(negative,
           "UPDATE results SET latency_p50_ms = -1 WHERE id = "
           "(SELECT min(id) FROM results WHERE outcome = 'Passed')");
  EXPECT_EQ(run_command(gdnlab() + " sweep --replay " + negative + " --db " + dir + "/n.db --no-progress", out), 2)
      << out;
  EXPECT_NE(out.find("p50 -1"), std::string::npos) << out;
}

// A damaged page in the middle of the file used to turn into committed LaunchFailed rows
// (exit 0). Now the recording is refused before anything is replayed.
TEST_F(CorruptInputs, ADamagedRecordingIsRefusedBeforeReplay) {
  const std::string damaged = bundled_copy("damaged.db");
  const auto size = fs::file_size(damaged);
  ASSERT_GT(size, 8 * 4096u);
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>((size / 4096 / 2) * 4096));
    const std::string junk(4096, '\xA5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const std::string replayed = dir + "/replayed.db";
  const int rc = run_command(gdnlab() + " sweep --replay " + damaged + " --db " + replayed + " --no-progress", out);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_TRUE(out.find("damaged") != std::string::npos || out.find("corrupt") != std::string::npos ||
              out.find("malformed") != std::string::npos)
      << out;
  EXPECT_EQ(count_results_or_zero(replayed), 0u) << out;
}

// Text that is not UTF-8 (a shape-set name, a device name) used to make report's JSON invalid.
TEST_F(CorruptInputs, ReportJsonStaysValidWithNonUtf8Text) {
  exec_sql(rec.path, "UPDATE sweeps SET shapes = CAST(X'66FF0A22' AS TEXT); "
                     "UPDATE devices SET name = CAST(X'4E56C328220A7D' AS TEXT)");
  ASSERT_EQ(run_command(gdnlab() + " report --db " + rec.path + " --format json 2>/dev/null", out), 0) << out;
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(out)) << out;  // strict: invalid UTF-8 throws
  EXPECT_TRUE(doc["sweep"]["shapes"].is_string());
  EXPECT_NE(doc["device"]["name"].get<std::string>().find('\n'), std::string::npos);
}

// Export's default is the newest finished sweep; an unfinished one only with --allow-partial,
// and then marked partial. gap likewise.
TEST_F(CorruptInputs, UnfinishedSweepsAreUsedOnlyWhenAskedAndMarkedPartial) {
  const std::string db = bundled_copy("interrupted.db");
  exec_sql(db, "UPDATE sweeps SET status = 'interrupted'");
  EXPECT_EQ(run_command(gdnlab() + " export --db " + db + " --out " + dir + "/t1", out), 2) << out;
  EXPECT_NE(out.find("--allow-partial"), std::string::npos) << out;
  EXPECT_EQ(run_command(gdnlab() + " export --db " + db + " --sweep 1 --out " + dir + "/t1", out), 2) << out;
  EXPECT_NE(out.find("not finished"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir + "/t1/dispatch.json"));
  ASSERT_EQ(run_command(gdnlab() + " export --db " + db + " --sweep 1 --allow-partial --out " + dir + "/t2", out), 0)
      << out;
  const auto doc = nlohmann::json::parse(read_file(dir + "/t2/dispatch.json"));
  EXPECT_EQ(doc["partial"], true);
  EXPECT_NE(read_file(dir + "/t2/gdn_dispatch_table.hpp").find("// PARTIAL"), std::string::npos);

  EXPECT_EQ(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1", out), 2) << out;
  EXPECT_NE(out.find("--allow-partial"), std::string::npos) << out;
  ASSERT_EQ(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1 --allow-partial", out), 0) << out;
  EXPECT_NE(out.find("PARTIAL"), std::string::npos) << out;
}
