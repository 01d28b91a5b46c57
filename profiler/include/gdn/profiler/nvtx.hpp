// NVTX ranges (domain "gdnlab") so an nsys or ncu capture of the runner reads like the
// database: one range per sweep, per configuration (its procedural name) and per phase.
#pragma once

#include <string>
#include <string_view>

namespace gdn::profiler {

enum class NvtxLevel { Sweep, Config, Phase };

// Pure: the range's text, "sweep: <name>", "config: <name>", "phase: <name>".
std::string nvtx_range_text(NvtxLevel level, std::string_view name);

// Pushes a range on construction and pops it on destruction (same thread). Costs ~nothing
// when no tool is attached.
class NvtxRange {
 public:
  NvtxRange(NvtxLevel level, std::string_view name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace gdn::profiler
