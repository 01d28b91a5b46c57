// Faults of the results database under a running sweep: a recording that fails (an SQLite
// trigger that aborts inserts, as a commit error or a rejected value does), a disk that fills
// up (a small tmpfs), and finished or WAL databases read from read-only media (a tmpfs
// remounted read-only). Each stops or reads the way docs/reliability.md says: the first error
// reported, exit 1, the sweep marked interrupted where the disk allows and resumable, every
// committed result kept; read-only commands work on read-only media.
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

extern char** environ;

namespace {

namespace fs = std::filesystem;

class StorageFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("storage");
    rec = make_recorded_db(dir + "/recorded.db");
  }
  void TearDown() override {
    mount.reset();
    fs::remove_all(dir);
  }
  std::size_t expected_total() const { return (rec.variants.size() - 1) * 4 + 1; }
  gdn::db::SweepStatus status_of_first_sweep(const std::string& db) const {
    gdn::db::OpenOptions oo;
    oo.create_if_missing = false;
    oo.read_only = true;
    const auto database = gdn::db::Database::open(db, oo);
    return gdn::db::list_sweeps(database).back().sweep.status;
  }
  // --resume finishes the sweep: every pair stored, each exactly once.
  void expect_resume_completes(const std::string& db) {
    ASSERT_EQ(run_command(replay_sweep_cmd(rec, db, "--seed 5 --resume"), out), 0) << out;
    const auto after = all_results(db);
    EXPECT_EQ(after.size(), expected_total());
    EXPECT_EQ(by_pair(after).size(), after.size()) << "no duplicate pair";
  }
  std::string dir, out;
  RecordedDb rec;
  std::unique_ptr<TmpfsMount> mount;
};

// Runs `command` through sh in the background; returns its pid.
pid_t spawn(const std::string& command) {
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) return -1;
  return pid;
}

// Waits up to `limit` for `pid`; kills it (and reports -1) when it does not end: a sweep that
// spins instead of stopping.
int wait_bounded(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// The recorder throws (here: a trigger aborts the insert of a Passed result once two results
// are stored; other outcomes still insert, as a transient commit error's retry would). The
// coordinator used to catch that as a worker failure, record a Crashed result in its place,
// count the request twice and spin at 100 % CPU forever, deaf to signals. Now: exit 1 with the database's message, marked interrupted,
// every committed result kept, and --resume finishes the sweep once the fault is gone.
TEST_F(StorageFaults, ARecordingErrorStopsTheSweepWithItsErrorAndResumes) {
  const std::string db = dir + "/out.db";
  gdn::db::Database::open(db);  // the schema, so the trigger has a table to watch
  exec_sql(db,
           "CREATE TRIGGER gdnlab_test_fault BEFORE INSERT ON results "
           "WHEN NEW.outcome = 'Passed' AND (SELECT count(*) FROM results) >= 2 "
           "BEGIN SELECT RAISE(ABORT, 'injected recording failure'); END");
  const std::string log = dir + "/sweep.log";
  const pid_t pid = spawn(replay_sweep_cmd(rec, db, "--seed 5") + " > " + log + " 2>&1");
  ASSERT_GT(pid, 0);
  const int rc = wait_bounded(pid, std::chrono::seconds(60));
  const std::string text = read_file(log);
  ASSERT_NE(rc, -1) << "the sweep did not stop within 60 s (livelock): " << text;
  EXPECT_EQ(rc, 1) << text;
  EXPECT_NE(text.find("injected recording failure"), std::string::npos) << text;
  EXPECT_NE(text.find("recording the result of"), std::string::npos) << text;
  EXPECT_NE(text.find("--resume"), std::string::npos) << text;
  EXPECT_EQ(text.find("malformed answer"), std::string::npos) << "blamed on a worker: " << text;
  EXPECT_GE(count_results_or_zero(db), 2u);
  EXPECT_LT(count_results_or_zero(db), expected_total());
  for (const auto& r : all_results(db))  // the recording's own Crashed pair may be there, no invented one
    EXPECT_EQ(r.result.message.find("malformed answer"), std::string::npos) << "blamed on a worker: " << r.result.message;
  EXPECT_EQ(status_of_first_sweep(db), gdn::db::SweepStatus::Interrupted);

  exec_sql(db, "DROP TRIGGER gdnlab_test_fault");
  expect_resume_completes(db);
}

// The disk fills up mid-sweep. The first error (the failed commit) is the one reported, not the
// status update that fails after it; the process stops (exit 1); with space again, --resume
// finishes the sweep and every pair is stored exactly once.
TEST_F(StorageFaults, DiskFullReportsTheFirstErrorAndStaysResumable) {
  mount = std::make_unique<TmpfsMount>(dir + "/small", "1m");
  if (!mount->mounted()) GTEST_SKIP() << "skipped: " << mount->why();
  const std::string db = dir + "/small/out.db", log = dir + "/sweep.log";
  const pid_t pid = spawn("GDN_TEST_WORKER_DELAY_MS=150 exec " + fault_sweep_cmd(rec, db, "--seed 5") + " > " +
                          log + " 2>&1");
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_results_or_zero(db) < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(count_results_or_zero(db), 3u) << read_file(log);
  std::string fill_out;
  run_command("dd if=/dev/zero of=" + dir + "/small/filler bs=4k", fill_out);  // until the disk is full
  const int rc = wait_bounded(pid, std::chrono::seconds(60));
  const std::string text = read_file(log);
  ASSERT_NE(rc, -1) << "the sweep did not stop within 60 s: " << text;
  ASSERT_EQ(rc, 1) << "the sweep finished before the disk filled up, or failed otherwise: " << text;
  const auto first = text.find("recording the result of");
  ASSERT_NE(first, std::string::npos) << "the failing commit is not reported: " << text;
  EXPECT_TRUE(text.find("disk is full", first) != std::string::npos ||
              text.find("I/O error", first) != std::string::npos)
      << text;
  const auto status_failure = text.find("marking the sweep interrupted failed too");
  if (status_failure != std::string::npos) EXPECT_LT(first, status_failure) << text;
  EXPECT_EQ(text.find("SQL ["), std::string::npos) << "raw SQL in a user message: " << text;

  fs::remove(dir + "/small/filler");
  expect_resume_completes(db);
}

// report, export, gap and --replay read databases on read-only media: a finished sweep's file
// (left in rollback mode) and a file still in WAL mode (opened immutable when its folder cannot
// be written). They used to fail with "attempt to write a readonly database".
TEST_F(StorageFaults, ReadOnlyCommandsWorkOnReadOnlyMedia) {
  mount = std::make_unique<TmpfsMount>(dir + "/media", "16m");
  if (!mount->mounted()) GTEST_SKIP() << "skipped: " << mount->why();
  const std::string finished = dir + "/media/finished.db", wal = dir + "/media/wal.db";
  // The bundled H200 recording: its replay has forward buckets, so gap has a table to judge.
  ASSERT_EQ(run_command(gdnlab() + " sweep --replay " GDN_BUNDLED_H200_DB " --db " + finished + " --no-progress", out), 0)
      << out;
  {
    std::ifstream header(finished, std::ios::binary);
    char bytes[20] = {};
    header.read(bytes, sizeof bytes);
    EXPECT_EQ(bytes[18], 1) << "a finished sweep leaves its database in rollback-journal mode";
  }
  fs::copy_file(finished, wal);
  exec_sql(wal, "PRAGMA journal_mode = WAL");
  ASSERT_TRUE(mount->remount_read_only()) << mount->why();

  for (const std::string& db : {finished, wal}) {
    EXPECT_EQ(run_command(gdnlab() + " report --db " + db, out), 0) << db << "\n" << out;
    EXPECT_EQ(run_command(gdnlab() + " report --db " + db + " --format json", out), 0) << db << "\n" << out;
    const std::string table = dir + "/table_" + fs::path(db).stem().string();
    EXPECT_EQ(run_command(gdnlab() + " export --db " + db + " --out " + table, out), 0) << db << "\n" << out;
    EXPECT_EQ(run_command(gdnlab() + " gap --db " + db + " --table-sweep 1", out), 0) << db << "\n" << out;
    const std::string replayed = dir + "/replayed_" + fs::path(db).stem().string() + ".db";
    EXPECT_EQ(run_command(gdnlab() + " sweep --replay " + db + " --db " + replayed + " --no-progress", out), 0)
        << db << "\n" << out;
  }
}
