#include "gdn/db/records.hpp"

namespace gdn::db {

namespace {
constexpr std::array<std::string_view, kOutcomeCount> kOutcomeNames = {
    "Passed", "Incorrect", "CompileRejected", "LaunchFailed", "Timeout", "Unsupported", "Crashed"};
constexpr std::array<std::string_view, 3> kStatusNames = {"running", "finished", "interrupted"};
}  // namespace

std::string_view to_string(Outcome o) { return kOutcomeNames[static_cast<std::size_t>(o)]; }

std::optional<Outcome> parse_outcome(std::string_view text) {
  for (std::size_t i = 0; i < kOutcomeNames.size(); ++i)
    if (kOutcomeNames[i] == text) return static_cast<Outcome>(i);
  return std::nullopt;
}

bool same_device_kind(const DeviceRecord& a, const DeviceRecord& b) {
  return a.name == b.name && a.sm_count == b.sm_count && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor &&
         a.sm_clock_mhz == b.sm_clock_mhz && a.mem_clock_mhz == b.mem_clock_mhz &&
         a.memory_bytes == b.memory_bytes && a.l2_bytes == b.l2_bytes && a.driver_version == b.driver_version &&
         a.cuda_version == b.cuda_version;
}

std::string_view to_string(SweepStatus s) { return kStatusNames[static_cast<std::size_t>(s)]; }

std::optional<SweepStatus> parse_sweep_status(std::string_view text) {
  for (std::size_t i = 0; i < kStatusNames.size(); ++i)
    if (kStatusNames[i] == text) return static_cast<SweepStatus>(i);
  return std::nullopt;
}

std::string_view to_string(gdn::Pass p) { return p == gdn::Pass::Forward ? "fwd" : "bwd"; }

std::optional<gdn::Pass> parse_pass(std::string_view text) {
  if (text == "fwd") return gdn::Pass::Forward;
  if (text == "bwd") return gdn::Pass::Backward;
  return std::nullopt;
}

}  // namespace gdn::db
