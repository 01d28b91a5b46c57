// The worker pool against tiny shell-script workers: startup failures, deaths, garbled answers.
#include <gtest/gtest.h>

#include <unistd.h>

#include "gdn/tuner/worker_pool.hpp"

using namespace gdn::tuner;
using gdn::db::Outcome;

namespace {

// A worker written in sh: `script` runs with the pool's "--gpu N" as its arguments.
WorkerPoolOptions sh_worker(const std::string& script) {
  WorkerPoolOptions o;
  o.base_argv = {"/bin/sh", "-c", script, "fake-worker"};
  o.gpus = {0};
  o.measure_timeout = std::chrono::milliseconds(2000);
  o.startup_timeout = std::chrono::milliseconds(2000);
  return o;
}

std::vector<TrialRequest> requests(int n) {
  std::vector<TrialRequest> r(n);
  for (int i = 0; i < n; ++i) {
    r[i].id = static_cast<std::uint64_t>(i + 1);
    r[i].variant = "v" + std::to_string(i);
  }
  return r;
}

}  // namespace

TEST(WorkerPool, AWorkerThatCannotStartIsAClearError) {
  WorkerPool pool(sh_worker("printf 'fatal\\tmessage=no device here\\n'; exit 2"));
  const auto reqs = requests(1);
  try {
    pool.run(reqs, [](const TrialRequest&, TrialOutput&&, const RoundTrip&) {});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no device here"), std::string::npos) << e.what();
  }
}

TEST(WorkerPool, DeathsAreCrashedAndTheWorkerIsRestarted) {
  // Says ready, reads one request, dies with status 3.
  WorkerPool pool(sh_worker("printf 'ready\\n'; read line; exit 3"));
  const auto reqs = requests(3);
  std::vector<TrialOutput> outs;
  pool.run(reqs, [&](const TrialRequest& r, TrialOutput&& o, const RoundTrip&) {
    EXPECT_EQ(o.id, r.id);
    outs.push_back(std::move(o));
  });
  ASSERT_EQ(outs.size(), 3u);
  for (const auto& o : outs) {
    EXPECT_EQ(o.result.outcome, Outcome::Crashed);
    EXPECT_NE(o.result.message.find("exited with status 3"), std::string::npos) << o.result.message;
  }
  EXPECT_EQ(pool.restarts(), 3);
}

TEST(WorkerPool, GarbledAnswersAreCrashed) {
  WorkerPool pool(sh_worker("printf 'ready\\n'; while read line; do printf 'result\\tid=oops\\n'; done"));
  const auto reqs = requests(2);
  int crashed = 0;
  pool.run(reqs, [&](const TrialRequest&, TrialOutput&& o, const RoundTrip&) {
    crashed += o.result.outcome == Outcome::Crashed;
    EXPECT_NE(o.result.message.find("malformed answer"), std::string::npos) << o.result.message;
  });
  EXPECT_EQ(crashed, 2);
}

TEST(WorkerPool, SilenceIsATimeout) {
  auto opt = sh_worker("printf 'ready\\n'; while read line; do sleep 30; done");
  opt.measure_timeout = std::chrono::milliseconds(300);
  WorkerPool pool(opt);
  const auto reqs = requests(1);
  Outcome got = Outcome::Passed;
  pool.run(reqs, [&](const TrialRequest&, TrialOutput&& o, const RoundTrip&) { got = o.result.outcome; });
  EXPECT_EQ(got, Outcome::Timeout);
}

// A recording error (on_done throws, as a failed database commit does) leaves run() at once
// with that error: it is not blamed on the worker (no Crashed answer, no restart) and the pool
// does not spin. The death-test child has an alarm, so a livelock fails instead of hanging.
TEST(WorkerPoolDeathTest, ARecordingErrorLeavesRunWithThatError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::alarm(20);
        TrialOutput answer;  // a well-formed answer to request 1, the first one sent
        answer.id = 1;
        answer.result.outcome = Outcome::Passed;
        const std::string line = wire::encode(encode_output(answer));
        WorkerPool pool(sh_worker("printf 'ready\\n'; while read line; do printf '%s\\n' '" + line + "'; done"));
        const auto reqs = requests(3);
        int calls = 0;
        try {
          pool.run(reqs, [&](const TrialRequest&, TrialOutput&&, const RoundTrip&) {
            ++calls;
            throw std::runtime_error("database is full");
          });
        } catch (const std::runtime_error& e) {
          const bool ok = std::string(e.what()) == "database is full" && calls == 1 && pool.restarts() == 0;
          std::_Exit(ok ? 0 : 1);
        }
        std::_Exit(2);
      },
      ::testing::ExitedWithCode(0), "");
}

// A worker that dies half-way through writing its answer (no newline) answers Crashed with how
// it died, and the next request goes to a restarted worker.
TEST(WorkerPool, AWorkerDyingMidAnswerIsCrashed) {
  WorkerPool pool(sh_worker("printf 'ready\\n'; read line; printf 'result\\tid=1\\toutco'; kill -9 $$"));
  const auto reqs = requests(2);
  std::vector<TrialOutput> outs;
  pool.run(reqs, [&](const TrialRequest&, TrialOutput&& o, const RoundTrip&) { outs.push_back(std::move(o)); });
  ASSERT_EQ(outs.size(), 2u);
  for (const auto& o : outs) {
    EXPECT_EQ(o.result.outcome, Outcome::Crashed);
    EXPECT_NE(o.result.message.find("signal 9"), std::string::npos) << o.result.message;
  }
  EXPECT_EQ(pool.restarts(), 2);
}
