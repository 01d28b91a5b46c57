// A test-only worker for the GPU fault tests: gdnlab's worker loop over a test backend that
// wraps the real GPU backend and, on the calls of one variant, first runs a kernel that faults
// (illegal address) or never finishes. The real backend then meets the fault on its next CUDA
// call, so what the sweep records comes from the production paths: the sticky-error handling
// of the GPU backend (Crashed, worker restarted) and the coordinator's timeout (Timeout).
//
// Environment (read by this test executable only):
//   GDN_FAULT_WORKER_VARIANT=<procedural name>   the variant whose calls fault
//   GDN_FAULT_WORKER_MODE=fault|hang
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "gdn/tuner/backend.hpp"
#include "gdn/tuner/worker_main.hpp"
#include "gpu_fault_kernels.hpp"

namespace {

using namespace gdn::tuner;

class FaultingBackend : public MeasureBackend {
 public:
  FaultingBackend(std::unique_ptr<MeasureBackend> inner, std::string variant, bool hang)
      : inner_(std::move(inner)), variant_(std::move(variant)), hang_(hang) {}
  TrialOutput gate(const TrialRequest& r) override {
    inject(r);
    return inner_->gate(r);
  }
  TrialOutput measure(const TrialRequest& r) override {
    inject(r);
    return inner_->measure(r);
  }
  bool context_lost() const override { return inner_->context_lost(); }

 private:
  void inject(const TrialRequest& r) const {
    if (r.variant != variant_) return;
    if (hang_) testing::endless_kernel();
    else testing::illegal_address_fault();
  }
  std::unique_ptr<MeasureBackend> inner_;
  std::string variant_;
  bool hang_;
};

}  // namespace

int main(int argc, char** argv) {
  WorkerOptions options;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--gpu") == 0 && i + 1 < argc) options.gpu = std::atoi(argv[++i]);
  const char* variant = std::getenv("GDN_FAULT_WORKER_VARIANT");
  const char* mode = std::getenv("GDN_FAULT_WORKER_MODE");
  if (!variant || !mode || (std::strcmp(mode, "fault") != 0 && std::strcmp(mode, "hang") != 0)) {
    std::cerr << "gdnlab_fault_worker: set GDN_FAULT_WORKER_VARIANT and GDN_FAULT_WORKER_MODE=fault|hang\n";
    return 2;
  }
  const bool hang = std::strcmp(mode, "hang") == 0;
  return run_worker(options, [&](const WorkerOptions& o) -> std::unique_ptr<MeasureBackend> {
    return std::make_unique<FaultingBackend>(make_gpu_backend(o.gpu), variant, hang);
  });
}
