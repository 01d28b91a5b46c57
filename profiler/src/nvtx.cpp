// NVTX3 (header-only, from the toolkit): ranges in the "gdnlab" domain.
#include "gdn/profiler/nvtx.hpp"

#include <nvtx3/nvToolsExt.h>

namespace gdn::profiler {
namespace {

nvtxDomainHandle_t gdnlab_domain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("gdnlab");
  return domain;
}

// One colour per level so the nesting reads at a glance in nsys.
std::uint32_t colour(NvtxLevel level) {
  switch (level) {
    case NvtxLevel::Sweep: return 0xFF3B82F6u;   // blue
    case NvtxLevel::Config: return 0xFF10B981u;  // green
    case NvtxLevel::Phase: return 0xFFF59E0Bu;   // amber
  }
  return 0xFF888888u;
}

}  // namespace

std::string nvtx_range_text(NvtxLevel level, std::string_view name) {
  std::string_view prefix = level == NvtxLevel::Sweep    ? "sweep: "
                            : level == NvtxLevel::Config ? "config: "
                                                         : "phase: ";
  std::string out(prefix);
  out += name;
  return out;
}

NvtxRange::NvtxRange(NvtxLevel level, std::string_view name) {
  const std::string text = nvtx_range_text(level, name);
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = colour(level);
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = text.c_str();  // copied by the tool during the call
  nvtxDomainRangePushEx(gdnlab_domain(), &attr);
}

NvtxRange::~NvtxRange() { nvtxDomainRangePop(gdnlab_domain()); }

}  // namespace gdn::profiler
