// The dashboard's database session: every bad file is a message, recovery, change detection.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "gdn/db/model.hpp"
#include "gdn/gui/model/db_session.hpp"
#include "temp_dir.hpp"
#include "test_db.hpp"

using namespace gdn;
using namespace gdn::gui::model;

TEST(DbSession, MissingFileIsAMessageAndIsPickedUpOnceCreated) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("later.db");
  DbSession session(path, 0.5);
  EXPECT_FALSE(session.poll(0.0));
  EXPECT_FALSE(session.is_open());
  ASSERT_TRUE(session.problem().has_value());
  EXPECT_EQ(session.problem()->headline, "No database at " + path);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the dashboard must never create the file";

  gdn::gui::testing::make_test_db(path, {.variants = 3, .problems = 2});
  EXPECT_FALSE(session.poll(0.2)) << "retries wait for the poll interval";
  EXPECT_TRUE(session.poll(0.6));
  EXPECT_TRUE(session.is_open());
  EXPECT_FALSE(session.problem().has_value());
}

TEST(DbSession, CorruptAndForeignFilesAreNamedAsSuch) {
  gdn::gui::testing::TempDir dir;
  const std::string corrupt = dir.file("corrupt.db");
  gdn::gui::testing::make_corrupt_file(corrupt);
  DbSession a(corrupt, 1.0);
  a.poll(0.0);
  ASSERT_FALSE(a.is_open());
  EXPECT_NE(a.problem()->headline.find("Not a readable SQLite database"), std::string::npos)
      << a.problem()->headline << "\n" << a.problem()->detail;

  const std::string foreign = dir.file("foreign.db");
  gdn::gui::testing::make_foreign_sqlite(foreign);
  DbSession b(foreign, 1.0);
  b.poll(0.0);
  ASSERT_FALSE(b.is_open());
  EXPECT_NE(b.problem()->headline.find("Not a gdnlab results database"), std::string::npos)
      << b.problem()->headline << "\n" << b.problem()->detail;
}

TEST(DbSession, LockedDatabaseIsAMessageAndRecoversWhenReleased) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("locked.db");
  gdn::gui::testing::make_test_db(path, {.variants = 3, .problems = 2});
  // Another process holding an exclusive lock: in WAL mode that takes exclusive locking mode
  // plus a write, which keeps every other connection out until the lock is released.
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  DbSession session(path, 0.5);
  session.poll(0.0);
  EXPECT_FALSE(session.is_open());
  ASSERT_TRUE(session.problem().has_value());
  EXPECT_NE(session.problem()->headline.find("locked"), std::string::npos)
      << session.problem()->headline << "\n" << session.problem()->detail;
  ASSERT_EQ(sqlite3_exec(holder, "COMMIT; PRAGMA locking_mode = NORMAL;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(holder);
  EXPECT_TRUE(session.poll(1.0));
  EXPECT_TRUE(session.is_open());
}

TEST(DbSession, DetectsWritesByAnotherConnection) {
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("live.db");
  const auto ids = gdn::gui::testing::make_test_db(
      path, {.variants = 3, .problems = 2, .sweeps = 1, .finish_sweeps = false});
  DbSession session(path, 0.25);
  ASSERT_TRUE(session.poll(0.0));
  EXPECT_FALSE(session.poll(0.5)) << "nothing was written";
  EXPECT_EQ(db::list_sweeps(session.db()).front().sweep.status, db::SweepStatus::Running);
  {
    db::Database writer = db::Database::open(path);
    const std::int64_t problem = gdn::gui::testing::register_test_problem(writer, 42);
    gdn::gui::testing::append_result(writer, ids.sweeps[0], ids.variants[0], problem, 1.0);
  }
  EXPECT_FALSE(session.poll(0.6)) << "not yet due";
  EXPECT_TRUE(session.poll(0.8));
  EXPECT_EQ(db::list_sweeps(session.db()).front().result_count, ids.results + 1);
}

TEST(DbSession, FailClosesAndDescribesEveryErrorKind) {
  using Kind = db::DbError::Kind;
  for (Kind k : {Kind::Missing, Kind::NotADatabase, Kind::ForeignSchema, Kind::TooNew,
                 Kind::NeedsMigration, Kind::Locked, Kind::Other}) {
    const SessionProblem p = describe_db_error("x.db", db::DbError(k, "detail text"));
    EXPECT_FALSE(p.headline.empty());
    EXPECT_NE(p.headline.find("x.db"), std::string::npos);
    EXPECT_NE(p.detail.find("detail text"), std::string::npos);
  }
  gdn::gui::testing::TempDir dir;
  const std::string path = dir.file("f.db");
  gdn::gui::testing::make_test_db(path, {.variants = 2, .problems = 1});
  DbSession session(path, 1.0);
  ASSERT_TRUE(session.poll(0.0));
  session.fail(db::DbError(Kind::NotADatabase, "database disk image is malformed"));
  EXPECT_FALSE(session.is_open());
  EXPECT_TRUE(session.poll(1.0)) << "reopened after the interval";
}
