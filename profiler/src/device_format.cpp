// Pure formatting of device facts.
#include <cstdio>
#include <sstream>

#include "gdn/profiler/device_info.hpp"

namespace gdn::profiler {

std::string format_uuid(const std::array<unsigned char, 16>& b) {
  char out[64];
  std::snprintf(out, sizeof out,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return out;
}

std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string describe(const DeviceInfo& d) {
  std::ostringstream s;
  const double gib = static_cast<double>(d.total_memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  s << "GPU " << d.ordinal << ": " << d.name << "  (" << d.uuid << ", PCI " << d.pci_bus_id << ")\n"
    << "  compute capability " << d.cc_major << "." << d.cc_minor << ", " << d.sm_count << " SMs, "
    << "SM clock peak " << d.sm_clock_peak_khz / 1000 << " MHz";
  if (d.sm_clock_now_mhz) s << " (now " << d.sm_clock_now_mhz << " MHz)";
  s << "\n  memory " << gib << " GiB, " << d.mem_bus_width_bits << "-bit bus, clock "
    << d.mem_clock_peak_khz / 1000 << " MHz; L2 " << d.l2_bytes / (1024 * 1024) << " MiB"
    << " (persisting max " << d.persisting_l2_max_bytes / (1024 * 1024) << " MiB)\n"
    << "  per SM: " << d.shared_per_sm_bytes / 1024 << " KiB shared, " << d.registers_per_sm
    << " registers, " << d.max_threads_per_sm << " threads; per block opt-in shared "
    << d.shared_per_block_optin_bytes / 1024 << " KiB\n"
    << "  driver CUDA " << format_cuda_version(d.driver_version) << ", runtime "
    << format_cuda_version(d.runtime_version) << "\n";
  const CuptiSupport& c = d.cupti;
  if (!c.built_with_cupti) {
    s << "  CUPTI: unavailable (" << c.reason << ")\n";
  } else {
    s << "  CUPTI API " << c.cupti_api_version << ", chip " << (c.chip_name.empty() ? "?" : c.chip_name)
      << ": range profiler " << (c.range_profiler_supported ? "supported" : "unsupported")
      << ", PM sampling " << (c.pm_sampling_supported ? "supported" : "unsupported")
      << ", counters " << (c.counters_available ? "available" : "unavailable") << "\n";
    if (!c.reason.empty()) s << "    why: " << c.reason << "\n";
  }
  return s.str();
}

}  // namespace gdn::profiler
