// Frame-time bookkeeping for --frame-stats: the first frame (fonts, GL objects, the initial
// database load) is reported apart from the steady state.
#pragma once

#include <string>
#include <vector>

namespace gdn::gui {

class FrameStats {
 public:
  void add(double frame_ms) { frames_ms_.push_back(frame_ms); }
  // "frames 60: first 412.0 ms; then median 16.1 ms, p90 18.3 ms, max 25.0 ms"
  std::string summary() const;

 private:
  std::vector<double> frames_ms_;
};

}  // namespace gdn::gui
