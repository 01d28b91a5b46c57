#include "frame_stats.hpp"

#include <cstdio>
#include <vector>

#include "gdn/gui/model/stats.hpp"

namespace gdn::gui {

std::string FrameStats::summary() const {
  if (frames_ms_.empty()) return "frames 0";
  char buf[256];
  if (frames_ms_.size() == 1) {
    std::snprintf(buf, sizeof buf, "frames 1: first %.1f ms", frames_ms_.front());
    return buf;
  }
  const std::vector<double> steady(frames_ms_.begin() + 1, frames_ms_.end());
  double max = 0;
  for (double v : steady) max = v > max ? v : max;
  std::snprintf(buf, sizeof buf,
                "frames %zu: first %.1f ms; then median %.1f ms, p90 %.1f ms, max %.1f ms",
                frames_ms_.size(), frames_ms_.front(), model::quantile(steady, 0.5),
                model::quantile(steady, 0.9), max);
  return buf;
}

}  // namespace gdn::gui
