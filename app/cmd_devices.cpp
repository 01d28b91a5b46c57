// gdnlab devices: GPUs, SMs, clocks, CUPTI counter availability.
#include <iostream>

#include "commands.hpp"
#include "gdn/profiler/device_info.hpp"

namespace gdn::cli {

void add_devices(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("devices", "List CUDA devices: SMs, clocks, memory, CUPTI counter availability");
  sub->callback([&run] {
    run = [] {
      std::string reason;
      const int n = profiler::cuda_device_count(&reason);
      if (n == 0) {
        std::cout << "no CUDA device: " << reason << '\n';
        return 1;
      }
      for (const auto& d : profiler::query_devices()) std::cout << profiler::describe(d) << '\n';
      return 0;
    };
  });
}

}  // namespace gdn::cli
