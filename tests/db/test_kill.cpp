// kill -9 in the middle of a sweep's writes: every committed result is whole, none is partial.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "db_fixture.hpp"
#include "gdn/db/model.hpp"
#include "statement_probe.hpp"

namespace gdn::db::test {
namespace {

constexpr int kSamplesPerResult = 64;

// The child: registers problems in row order and writes one result each (with its samples)
// until killed; far more rows than it can write before the parent kills it.
constexpr int kRows = 100000;
[[noreturn]] void write_forever(const std::string& path) {
  try {
    Database db = Database::open(path);
    ResultsWriter w(db);
    const std::int64_t sweep = w.begin_sweep(sweep_of(w.register_device(h200()), w.register_build(build())));
    const std::int64_t variant = w.register_variant(fused_variant("gdn_fwd_A", 64, 2));
    const std::vector<double> samples(kSamplesPerResult, 1.0);
    for (int row = 0; row < kRows; ++row) {
      const std::int64_t p = w.register_problem(problem(row, 16, 32, 1, 64 + row, 64 + row));
      w.insert_result(passed(sweep, variant, p, 1.0), samples);
    }
  } catch (...) {
    ::_exit(2);
  }
  ::_exit(0);
}

TEST(KillDuringWrites, CommittedResultsAreWholeAndResumeFillsTheRest) {
  ScratchDir dir;
  const std::string path = dir.file("r.db");
  { Database::open(path); }  // schema first, so the child only writes results
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) write_forever(path);
  // Let it commit some results, then kill it without warning.
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Database probe = Database::open(path, {.read_only = true});
    if (count_rows(probe, "results") >= 20) break;
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer finished before it was killed; status " << status;

  Database db = Database::open(path);
  EXPECT_EQ(integrity_check(db), "ok");
  const std::int64_t results = count_rows(db, "results");
  EXPECT_GE(results, 20);
  EXPECT_EQ(count_rows(db, "samples"), results * kSamplesPerResult);  // no partial result

  // Resume: rows were written in order, so rows [0, results) are done; writing rows
  // [0, results + 10) again adds exactly the 10 missing ones.
  ResultsWriter w(db);
  const std::int64_t sweep = list_sweeps(db).front().sweep.id;
  const std::int64_t variant = w.register_variant(fused_variant("gdn_fwd_A", 64, 2));
  const std::vector<double> samples(kSamplesPerResult, 1.0);
  std::int64_t skipped = 0;
  const int resume_rows = static_cast<int>(results) + 10;
  for (int row = 0; row < resume_rows; ++row) {
    const std::int64_t p = w.register_problem(problem(row, 16, 32, 1, 64 + row, 64 + row));
    skipped += w.insert_result(passed(sweep, variant, p, 1.0), samples).already_present ? 1 : 0;
  }
  EXPECT_EQ(skipped, results);
  EXPECT_EQ(count_rows(db, "results"), resume_rows);
  EXPECT_EQ(count_rows(db, "samples"), resume_rows * kSamplesPerResult);
}

}  // namespace
}  // namespace gdn::db::test
