// The test-only sweep worker (sweep --worker-exe): gdnlab's worker loop over a test backend that
// wraps the real one (GPU, or replay with --replay) and injects faults, as the environment of
// the test asks. The production worker (`gdnlab worker`) has no fault hook. Same command line
// as `gdnlab worker`: `<exe> worker [--gpu N] [--replay DB [--replay-sweep ID]]`.
//
// Process faults (any backend; the crash-isolation and resume tests):
//   GDN_TEST_FAULT_VARIANT=<name>[,<name>...]  the worker dies by SIGSEGV on that candidate
//   GDN_TEST_HANG_VARIANT=<name>[,<name>...]   the worker stops answering (sleeps)
//   GDN_TEST_WORKER_DELAY_MS=<ms>              every request takes at least that long (so a
//                                              test can kill -9 a sweep half-way)
// Device faults (GPU backend; the GPU fault tests): on the calls of one variant a kernel first
// faults (illegal address) or never finishes; the real backend meets the fault on its next CUDA
// call, so what the sweep records comes from the production paths (the GPU backend's
// sticky-error handling: Crashed, worker restarted; the coordinator's timeout: Timeout).
//   GDN_FAULT_WORKER_VARIANT=<name>  GDN_FAULT_WORKER_MODE=fault|hang
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

#include "gdn/tuner/backend.hpp"
#include "gdn/tuner/worker_main.hpp"
#include "gpu_fault_kernels.hpp"

namespace {

using namespace gdn::tuner;

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

enum class DeviceFault { None, Fault, Hang };

class FaultBackend final : public MeasureBackend {
 public:
  FaultBackend(std::unique_ptr<MeasureBackend> inner, std::string device_variant, DeviceFault device_fault)
      : inner_(std::move(inner)), device_variant_(std::move(device_variant)), device_fault_(device_fault) {}
  TrialOutput gate(const TrialRequest& r) override {
    inject(r.variant);
    return inner_->gate(r);
  }
  TrialOutput measure(const TrialRequest& r) override {
    inject(r.variant);
    return inner_->measure(r);
  }
  bool context_lost() const override { return inner_->context_lost(); }

 private:
  void inject(const std::string& variant) const {
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
    if (device_fault_ != DeviceFault::None && variant == device_variant_) {
      if (device_fault_ == DeviceFault::Hang) testing::endless_kernel();
      else testing::illegal_address_fault();
    }
  }
  std::unique_ptr<MeasureBackend> inner_;
  std::string device_variant_;
  DeviceFault device_fault_;
};

}  // namespace

int main(int argc, char** argv) {
  WorkerOptions opt;
  const std::string usage = "usage: gdnlab_fault_worker worker [--gpu N] [--replay DB [--replay-sweep ID]]";
  if (argc < 2 || std::string(argv[1]) != "worker") {
    std::cerr << usage << '\n';
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "gdnlab_fault_worker: " << arg << " needs a value; " << usage << '\n';
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--gpu") opt.gpu = std::stoi(value);
    else if (arg == "--replay") opt.replay_db = value;
    else if (arg == "--replay-sweep") opt.replay_sweep = std::stoll(value);
    else {
      std::cerr << "gdnlab_fault_worker: unknown option " << arg << "; " << usage << '\n';
      return 2;
    }
  }
  const char* device_variant = std::getenv("GDN_FAULT_WORKER_VARIANT");
  const std::string mode = std::getenv("GDN_FAULT_WORKER_MODE") ? std::getenv("GDN_FAULT_WORKER_MODE") : "";
  if ((device_variant != nullptr) != !mode.empty() || (!mode.empty() && mode != "fault" && mode != "hang")) {
    std::cerr << "gdnlab_fault_worker: set both GDN_FAULT_WORKER_VARIANT and GDN_FAULT_WORKER_MODE=fault|hang, "
                 "or neither\n";
    return 2;
  }
  const DeviceFault fault = mode.empty() ? DeviceFault::None : mode == "hang" ? DeviceFault::Hang : DeviceFault::Fault;
  return run_worker(opt, [&](const WorkerOptions& o) -> std::unique_ptr<MeasureBackend> {
    auto inner = o.replay_db.empty() ? make_gpu_backend(o.gpu) : make_replay_backend(o.replay_db, o.replay_sweep);
    return std::make_unique<FaultBackend>(std::move(inner), device_variant ? device_variant : "", fault);
  });
}
