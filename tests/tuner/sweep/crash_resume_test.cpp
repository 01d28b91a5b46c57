// Crash isolation (a worker that dies or hangs on one variant), kill -9 of the coordinator
// followed by --resume (no committed result lost, none duplicated), and SIGTERM to the whole
// process group, as `timeout` sends it (a clean stop, marked interrupted, nothing Crashed).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;
using gdn::db::Outcome;

extern char** environ;

namespace {
class CrashResume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("crash");
    rec = make_recorded_db(dir + "/recorded.db");
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir;
  RecordedDb rec;
  std::string out;
};
}  // namespace

TEST_F(CrashResume, FaultingVariantIsRecordedCrashedAndTheSweepGoesOn) {
  const auto db = dir + "/out.db";
  const auto& faulty = rec.variants[3];
  ASSERT_EQ(run_command("GDN_TEST_FAULT_VARIANT=" + faulty + " " + fault_sweep_cmd(rec, db, ""), out), 0) << out;
  EXPECT_NE(out.find("worker restarts 2"), std::string::npos) << "one crash per problem family: " << out;
  const auto rows = by_pair(all_results(db));
  ASSERT_EQ(rows.size(), (rec.variants.size() - 1) * 4 + 1);
  for (int p = 0; p < 4; ++p) {
    const auto& r = rows.at({faulty, p}).result;
    EXPECT_EQ(r.outcome, Outcome::Crashed);
    EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
    // Every other variant was measured by a restarted worker.
    EXPECT_EQ(rows.at({rec.variants[0], p}).result.outcome, Outcome::Passed);
  }
}

TEST_F(CrashResume, HangingVariantIsKilledAndRecordedTimeout) {
  const auto db = dir + "/out.db";
  const auto& hung = rec.variants[2];
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run_command("GDN_TEST_HANG_VARIANT=" + hung + " " +
                            fault_sweep_cmd(rec, db, "--timeout 1 --gate-timeout 1"), out), 0) << out;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  const auto rows = by_pair(all_results(db));
  for (int p = 0; p < 4; ++p) {
    const auto& r = rows.at({hung, p}).result;
    EXPECT_EQ(r.outcome, Outcome::Timeout);
    EXPECT_NE(r.message.find("timeout"), std::string::npos) << r.message;
  }
  EXPECT_EQ(rows.at({rec.variants[0], 0}).result.outcome, Outcome::Passed);
}

// Kills a replay sweep with SIGKILL once `at_least` results are committed, resumes it, and
// checks the committed results survived unchanged and every pair is stored exactly once.
void kill_and_resume(const RecordedDb& rec, const std::string& db, const std::string& args,
                     std::size_t at_least, std::size_t expected_total) {
  std::string out;
  // Slow workers so the coordinator can be killed half-way through.
  const std::string cmd = "GDN_TEST_WORKER_DELAY_MS=120 exec " + fault_sweep_cmd(rec, db, args);
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_results_or_zero(db) < at_least && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it could be killed";

  std::int64_t sweep_before = 0;
  const auto before = all_results(db, &sweep_before);
  ASSERT_GE(before.size(), at_least);
  ASSERT_LT(before.size(), expected_total);

  // A resume with other arguments is refused (and says what differs).
  EXPECT_EQ(run_command(replay_sweep_cmd(rec, db, args + " --metrics none --resume"), out), 2) << out;
  EXPECT_NE(out.find("--resume"), std::string::npos) << out;

  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, args + " --resume"), out), 0) << out;
  EXPECT_NE(out.find("(resumed)"), std::string::npos) << out;
  std::int64_t sweep_after = 0;
  const auto after = all_results(db, &sweep_after);
  EXPECT_EQ(sweep_after, sweep_before) << "same sweep id";
  ASSERT_EQ(after.size(), expected_total) << "every pair exactly once";
  EXPECT_EQ(by_pair(after).size(), after.size()) << "no duplicate pair";
  const auto after_by_id = [&] {
    std::map<std::int64_t, gdn::db::ResultRow> m;
    for (const auto& r : after) m.emplace(r.result.id, r);
    return m;
  }();
  for (const auto& r : before) {
    ASSERT_TRUE(after_by_id.count(r.result.id)) << "committed result " << r.result.id << " lost";
    const auto& a = after_by_id.at(r.result.id).result;
    EXPECT_EQ(a.outcome, r.result.outcome);
    EXPECT_EQ(a.latency_p50_ms, r.result.latency_p50_ms);
  }
  EXPECT_NE(out.find(std::to_string(before.size()) + " already stored"), std::string::npos) << out;

  // Finished: a further --resume has nothing to continue.
  EXPECT_EQ(run_command(replay_sweep_cmd(rec, db, args + " --resume"), out), 2) << out;
  EXPECT_NE(out.find("already finished"), std::string::npos) << out;
}

TEST_F(CrashResume, KillDashNineThenResumeLosesNothingAndDuplicatesNothing) {
  kill_and_resume(rec, dir + "/out.db", "--seed 5", 5, (rec.variants.size() - 1) * 4 + 1);
}

TEST_F(CrashResume, KillDashNineDuringHalvingThenResume) {
  // Halving stores every pair once (at its last fidelity): 6 runnable variants x 4 problems,
  // plus the rejected variant once. 6 rows = the rejection, the Unsupported pair, the two
  // Incorrect pairs and two more: the kill lands after rung 0's first answers.
  kill_and_resume(rec, dir + "/out.db", "--strategy halving --seed 5", 6, (rec.variants.size() - 1) * 4 + 1);
}

// What `timeout` (and a terminal's Ctrl-C) does: the signal reaches the coordinator and its
// workers together. The sweep must stop at a result boundary, exit 143 (128 + SIGTERM, as a
// shell reports a process the signal ended) saying how to resume, be
// marked interrupted, record no Crashed result for the trials the signal cut short, and
// --resume must finish it with every pair exactly once.
TEST_F(CrashResume, SigtermToTheProcessGroupStopsCleanlyThenResume) {
  const std::string db = dir + "/out.db", log = dir + "/sweep.log";
  const std::string cmd = "GDN_TEST_WORKER_DELAY_MS=120 exec " +
                          fault_sweep_cmd(rec, db, "--seed 5") + " > " + log + " 2>&1";
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, as `timeout` makes one
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, "/bin/sh", nullptr, &attr, const_cast<char**>(argv), environ), 0);
  posix_spawnattr_destroy(&attr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_results_or_zero(db) < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(::kill(-pid, SIGTERM), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  ASSERT_TRUE(WIFEXITED(status)) << "died of the signal instead of stopping: " << text.str();
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << text.str();
  EXPECT_NE(text.str().find("interrupted by SIGTERM"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("--resume"), std::string::npos) << text.str();

  const std::size_t expected_total = (rec.variants.size() - 1) * 4 + 1;
  const auto before = all_results(db);
  ASSERT_GE(before.size(), 5u);
  ASSERT_LT(before.size(), expected_total) << "the sweep finished before the signal";
  // The recording has one Crashed pair of its own (a segfault, replayed as recorded): only
  // that may appear, never a worker the signal killed.
  const auto recorded_crash = [](const gdn::db::ResultRow& r) {
    return r.result.message.find("signal 11") != std::string::npos;
  };
  for (const auto& r : before)
    if (r.result.outcome == Outcome::Crashed) EXPECT_TRUE(recorded_crash(r)) << r.result.message;
  {
    gdn::db::OpenOptions oo;
    oo.create_if_missing = false;
    oo.read_only = true;
    const auto database = gdn::db::Database::open(db, oo);
    const auto sweeps = gdn::db::list_sweeps(database);
    ASSERT_EQ(sweeps.size(), 1u);
    EXPECT_EQ(sweeps.front().sweep.status, gdn::db::SweepStatus::Interrupted);
  }

  ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--seed 5 --resume"), out), 0) << out;
  const auto after = all_results(db);
  ASSERT_EQ(after.size(), expected_total) << "every pair exactly once";
  EXPECT_EQ(by_pair(after).size(), after.size()) << "no duplicate pair";
  int crashed = 0;
  for (const auto& r : after)
    if (r.result.outcome == Outcome::Crashed) {
      ++crashed;
      EXPECT_TRUE(recorded_crash(r)) << r.result.message;
    }
  EXPECT_EQ(crashed, 1) << "the recording's one Crashed pair, nothing more";
}
