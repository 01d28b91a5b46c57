// A sweep worker with fault hooks, for the crash-isolation tests only (sweep --worker-exe):
// the production worker (gdnlab worker) has none. Same command line as `gdnlab worker`
// (`<exe> worker [--gpu N] [--replay DB [--replay-sweep ID]]`); its backend behaves, per
// request, like a kernel that faults or hangs, as the environment of the test asks:
//   GDN_TEST_FAULT_VARIANT=<name>[,<name>...]  the worker dies by SIGSEGV on that candidate
//   GDN_TEST_HANG_VARIANT=<name>[,<name>...]   the worker stops answering (sleeps)
//   GDN_TEST_WORKER_DELAY_MS=<ms>              every request takes at least that long (so a
//                                              test can kill -9 a replay sweep half-way)
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

#include "gdn/tuner/worker_main.hpp"

namespace {

using gdn::tuner::MeasureBackend;
using gdn::tuner::TrialOutput;
using gdn::tuner::TrialRequest;

bool listed_in_env(const char* var, const std::string& name) {
  const char* v = std::getenv(var);
  if (!v) return false;
  std::string_view list(v);
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

class FaultBackend final : public MeasureBackend {
 public:
  explicit FaultBackend(std::unique_ptr<MeasureBackend> inner) : inner_(std::move(inner)) {}
  TrialOutput gate(const TrialRequest& r) override {
    apply_hooks(r.variant);
    return inner_->gate(r);
  }
  TrialOutput measure(const TrialRequest& r) override {
    apply_hooks(r.variant);
    return inner_->measure(r);
  }
  bool context_lost() const override { return inner_->context_lost(); }

 private:
  static void apply_hooks(const std::string& variant) {
    if (listed_in_env("GDN_TEST_FAULT_VARIANT", variant)) {
      rlimit no_core{0, 0};
      ::setrlimit(RLIMIT_CORE, &no_core);  // a deliberate fault should not litter core files
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (listed_in_env("GDN_TEST_HANG_VARIANT", variant))
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    if (const char* delay = std::getenv("GDN_TEST_WORKER_DELAY_MS"))
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(delay)));
  }
  std::unique_ptr<MeasureBackend> inner_;
};

}  // namespace

int main(int argc, char** argv) {
  gdn::tuner::WorkerOptions opt;
  const std::string usage = "usage: fault_worker worker [--gpu N] [--replay DB [--replay-sweep ID]]";
  if (argc < 2 || std::string(argv[1]) != "worker") {
    std::cerr << usage << '\n';
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "fault_worker: " << arg << " needs a value; " << usage << '\n';
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--gpu") opt.gpu = std::stoi(value);
    else if (arg == "--replay") opt.replay_db = value;
    else if (arg == "--replay-sweep") opt.replay_sweep = std::stoll(value);
    else {
      std::cerr << "fault_worker: unknown option " << arg << "; " << usage << '\n';
      return 2;
    }
  }
  return gdn::tuner::run_worker(opt, [](std::unique_ptr<MeasureBackend> inner) {
    return std::make_unique<FaultBackend>(std::move(inner));
  });
}
