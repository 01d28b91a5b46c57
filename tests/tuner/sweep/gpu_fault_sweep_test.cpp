// GPU fault isolation in a real sweep on the device (label gpu; skipped without one): one
// variant's calls are preceded by a kernel that faults (illegal address) or never finishes,
// through a test-only worker (gpu_fault_worker_main.cpp). The variant is recorded Crashed or
// Timeout on every problem, its worker is restarted, the other variants are measured as usual
// and the sweep finishes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gdn/gdn.h"
#include "gdn/tuner/space.hpp"
#include "gdn/tuner/sweep.hpp"
#include "sweep_test_util.hpp"

using namespace gdn::tuner;
using namespace gdn::tuner::testing;
using gdn::db::Outcome;

namespace {

class GpuFaultSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gdn_device_available()) GTEST_SKIP() << "skipped: no CUDA device";
    for (const auto& v : list_space())
      if (v.compiled && v.pass == "fwd") forward.push_back(v.name);
    if (forward.size() < 2) GTEST_SKIP() << "needs two compiled forward variants, this build has " << forward.size();
    dir = temp_dir("gpu_fault");
  }
  void TearDown() override {
    ::unsetenv("GDN_FAULT_WORKER_VARIANT");
    ::unsetenv("GDN_FAULT_WORKER_MODE");
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }

  // A short real sweep of the smoke set with the fault injected into `victim`'s calls.
  SweepOutcome sweep_with(const std::string& victim, const std::string& mode, double timeout_s) {
    ::setenv("GDN_FAULT_WORKER_VARIANT", victim.c_str(), 1);
    ::setenv("GDN_FAULT_WORKER_MODE", mode.c_str(), 1);
    SweepOptions o;
    o.shapes = "smoke";
    o.db_path = dir + "/" + mode + ".db";
    o.gpus = {0};
    o.metrics = gdn::profiler::MetricSet::None;
    o.progress = false;
    o.timeout_s = timeout_s;
    o.gate_timeout_s = timeout_s;
    o.precise.min_samples = 5;
    o.precise.max_samples = 20;
    o.precise.time_cap_ms = 500;
    return run_sweep(o, {GDN_FAULT_WORKER_EXE});
  }

  void expect_isolated(const std::string& db, const std::string& victim, Outcome expected) {
    std::int64_t sweep_id = 0;
    const auto rows = all_results(db, &sweep_id);
    int victim_rows = 0, others_passed = 0;
    for (const auto& r : rows) {
      if (r.variant.name == victim) {
        ++victim_rows;
        EXPECT_EQ(r.result.outcome, expected) << r.problem.seqlens << ": " << r.result.message;
      } else {
        others_passed += r.result.outcome == Outcome::Passed;
      }
    }
    EXPECT_GT(victim_rows, 0);
    EXPECT_GT(others_passed, 0) << "the other variants were not measured after the fault";
    gdn::db::OpenOptions oo;
    oo.create_if_missing = false;
    oo.read_only = true;
    EXPECT_EQ(gdn::db::sweep_summary(gdn::db::Database::open(db, oo), sweep_id).sweep.status,
              gdn::db::SweepStatus::Finished);
  }

  std::vector<std::string> forward;
  std::string dir;
};

}  // namespace

TEST_F(GpuFaultSweep, AFaultingVariantIsRecordedCrashedAndTheSweepGoesOn) {
  const std::string victim = forward[1];
  const SweepOutcome out = sweep_with(victim, "fault", 120);
  EXPECT_GE(out.worker_restarts, 1) << format_outcome(out);
  expect_isolated(dir + "/fault.db", victim, Outcome::Crashed);
}

TEST_F(GpuFaultSweep, AHangingVariantIsRecordedTimeoutAndTheSweepGoesOn) {
  const std::string victim = forward[1];
  const SweepOutcome out = sweep_with(victim, "hang", 20);
  EXPECT_GE(out.worker_restarts, 1) << format_outcome(out);
  expect_isolated(dir + "/hang.db", victim, Outcome::Timeout);
}
