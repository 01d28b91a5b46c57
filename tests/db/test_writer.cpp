// The sweep runner's write path: idempotent registration, one transaction per result, resume.
#include <functional>

#include "db_fixture.hpp"
#include "gdn/db/model.hpp"

namespace gdn::db::test {
namespace {

struct WriterTest : ::testing::Test {
  ScratchDir dir;
  Database db = Database::open(dir.file("r.db"));
  ResultsWriter w{db};
  std::int64_t device = w.register_device(h200());
  std::int64_t build_id = w.register_build(build());
  std::int64_t variant = w.register_variant(fused_variant("gdn_fwd_a", 64, 2));
  std::int64_t prob = w.register_problem(problem(0, 16, 32, 1, 4096, 4096));
  std::int64_t sweep = w.begin_sweep(sweep_of(device, build_id));
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DbError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(WriterTest, RegistrationIsIdempotent) {
  EXPECT_EQ(w.register_device(h200()), device);
  EXPECT_EQ(w.register_build(build()), build_id);
  EXPECT_EQ(w.register_variant(fused_variant("gdn_fwd_a", 64, 2)), variant);
  EXPECT_EQ(w.register_problem(problem(0, 16, 32, 1, 4096, 4096)), prob);
  // A different driver is a different device row: provenance stays exact.
  EXPECT_NE(w.register_device(h200("575.0")), device);
  EXPECT_NE(w.register_build(build("def5678")), build_id);
  // The same config name in the backward pass is a distinct variant.
  EXPECT_NE(w.register_variant(fused_variant("gdn_fwd_a", 64, 2, gdn::Pass::Backward)), variant);
}

TEST_F(WriterTest, ConflictingRegistrationsAreRefused) {
  EXPECT_NE(message_of([&] { w.register_variant(fused_variant("gdn_fwd_a", 128, 3)); })
                .find("already stored with a different config"),
            std::string::npos);
  ProblemRecord changed = problem(0, 16, 32, 1, 4096, 4096);
  changed.h_v = 64;
  EXPECT_NE(message_of([&] { w.register_problem(changed); }).find("different fields"), std::string::npos);
}

TEST_F(WriterTest, BadRecordsNameTheField) {
  ProblemRecord p = problem(1, 16, 32, 1, 64, 64);
  p.dtype = "int8";
  EXPECT_NE(message_of([&] { w.register_problem(p); }).find("problem.dtype: expected bf16, fp16 or fp32, got 'int8'"),
            std::string::npos);
  DeviceRecord d = h200();
  d.uuid.clear();
  EXPECT_NE(message_of([&] { w.register_device(d); }).find("device.uuid"), std::string::npos);
  SweepRecord s = sweep_of(device, build_id);
  s.metrics_level = "max";
  EXPECT_NE(message_of([&] { w.begin_sweep(s); }).find("sweep.metrics_level"), std::string::npos);
  s = sweep_of(device, 999);
  EXPECT_NE(message_of([&] { w.begin_sweep(s); }).find("FOREIGN KEY"), std::string::npos);
  ResultRecord r = passed(sweep, variant, prob, 1.0);
  r.latency_p50_ms.reset();
  EXPECT_NE(message_of([&] { w.insert_result(r, {}); }).find("a Passed result needs a measured p50"),
            std::string::npos);
  const std::vector<double> bad_samples{1.0, -2.0};
  EXPECT_NE(message_of([&] { w.insert_result(passed(sweep, variant, prob, 1.0), bad_samples); })
                .find("samples_ms[1]"),
            std::string::npos);
  EXPECT_NE(message_of([&] { w.set_sweep_status(12345, SweepStatus::Finished); }).find("12345"),
            std::string::npos);
}

TEST_F(WriterTest, ResultSamplesAndTimelineAreStored) {
  const std::vector<double> samples{1.1, 1.0, 1.2, 0.9};
  const std::vector<PmSample> pm{{0, 0, 50.0, 10.0, 20.0, 30.0, 1.98e9}, {1, 1000, 90.0, {}, 40.0, 60.0, {}}};
  const InsertedResult ins = w.insert_result(passed(sweep, variant, prob, 1.0), samples, pm);
  EXPECT_FALSE(ins.already_present);
  EXPECT_EQ(samples_of(db, ins.result_id), samples);
  const std::vector<PmSample> timeline = pm_timeline_of(db, ins.result_id);
  ASSERT_EQ(timeline.size(), 2u);
  EXPECT_EQ(timeline[1].t_ns, 1000);
  EXPECT_EQ(timeline[1].sm_busy_pct, 90.0);
  EXPECT_FALSE(timeline[1].dram_pct.has_value());
  const auto row = result_by_id(db, ins.result_id);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->variant.config, fused_variant("gdn_fwd_a", 64, 2).config);
  EXPECT_EQ(row->problem.total_tokens, 4096);
  EXPECT_EQ(row->result.metrics.sm_busy_pct, 80.0);
  EXPECT_FALSE(row->result.metrics.dram_pct.has_value());
}

TEST_F(WriterTest, AFailedResultWritesNothing) {
  // A duplicate PM index fails the PRIMARY KEY half-way through the result's transaction:
  // the result row and its samples must be rolled back with it.
  const std::vector<double> samples{1.0, 1.0};
  const std::vector<PmSample> pm{{0, 0, {}, {}, {}, {}, {}}, {0, 5, {}, {}, {}, {}, {}}};
  EXPECT_THROW(w.insert_result(passed(sweep, variant, prob, 1.0), samples, pm), DbError);
  EXPECT_FALSE(w.has_result(sweep, variant, prob));
  EXPECT_EQ(count_results(db, {.sweep_id = sweep}), 0);
  // And the pair can be written afterwards (nothing half-stored blocks it).
  const InsertedResult later = w.insert_result(passed(sweep, variant, prob, 1.0), samples);
  EXPECT_FALSE(later.already_present);
  EXPECT_EQ(samples_of(db, later.result_id).size(), 2u);
}

TEST_F(WriterTest, ResumeNeverDuplicates) {
  const InsertedResult first = insert(w, passed(sweep, variant, prob, 1.0));
  const InsertedResult again = w.insert_result(passed(sweep, variant, prob, 5.0), std::vector<double>{5.0});
  EXPECT_TRUE(again.already_present);
  EXPECT_EQ(again.result_id, first.result_id);
  EXPECT_EQ(count_results(db, {.sweep_id = sweep}), 1);
  EXPECT_EQ(result_by_id(db, first.result_id)->result.latency_p50_ms, 1.0);  // first one kept
  EXPECT_EQ(samples_of(db, first.result_id).size(), 3u);
  const auto pairs = w.completed_pairs(sweep);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], std::make_pair(variant, prob));
  EXPECT_TRUE(w.has_result(sweep, variant, prob));
}

TEST_F(WriterTest, CommittedResultsSurviveAnAbandonedConnection) {
  insert(w, passed(sweep, variant, prob, 1.0));
  {
    // A second writer dies mid-transaction (its Transaction never commits).
    Database other = Database::open(dir.file("r.db"));
    ResultsWriter ow(other);
    Transaction tx(other);
    other.exec("DELETE FROM samples");
  }
  Database reopened = Database::open(dir.file("r.db"));
  EXPECT_EQ(count_results(reopened, {.sweep_id = sweep}), 1);
  EXPECT_EQ(samples_of(reopened, 1).size(), 3u);
}

TEST_F(WriterTest, SweepStatusStampsFinishTime) {
  EXPECT_EQ(sweep_summary(db, sweep).sweep.status, SweepStatus::Running);
  EXPECT_TRUE(sweep_summary(db, sweep).sweep.finished_at.empty());
  w.set_sweep_status(sweep, SweepStatus::Interrupted);
  EXPECT_EQ(sweep_summary(db, sweep).sweep.status, SweepStatus::Interrupted);
  EXPECT_FALSE(sweep_summary(db, sweep).sweep.finished_at.empty());
  w.set_sweep_status(sweep, SweepStatus::Running);  // resume
  EXPECT_TRUE(sweep_summary(db, sweep).sweep.finished_at.empty());
  const SweepSummary s = sweep_summary(db, sweep);
  EXPECT_EQ(s.sweep.protocol.max_samples, 200);
  EXPECT_TRUE(s.sweep.protocol.use_graphs);
  EXPECT_EQ(s.device.name, "NVIDIA H200");
  EXPECT_EQ(s.build.git_sha, "abc1234");
  EXPECT_FALSE(s.build.created_at.empty());
}

TEST_F(WriterTest, ReadOnlyDatabaseRefusesAWriter) {
  Database ro = Database::open(dir.file("r.db"), {.read_only = true});
  EXPECT_NE(message_of([&] { ResultsWriter bad(ro); }).find("read-only"), std::string::npos);
}

}  // namespace
}  // namespace gdn::db::test
