// The live progress line on stderr: done/total, rate, ETA, best so far. On a terminal it is
// redrawn in place (carriage return) at most five times per second; into a file or pipe it is
// written as a plain line every ten seconds. The final state is always written.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace gdn::tuner {

class ProgressLine {
 public:
  ProgressLine(std::size_t total, bool enabled, std::FILE* out = stderr);
  // `fresh` counts toward the rate (measured now), answers from the database do not.
  void advance(bool fresh);
  void set_total(std::size_t total) { total_ = total; }
  void note_best(const std::string& problem, const std::string& variant, double p50_ms);
  void finish();

  // Pure, for tests: "[  12/40  30%] 3.1/s ETA 9s | best smoke#2: gdn_fwd_... 0.123 ms"
  static std::string render(std::size_t done, std::size_t total, double rate_per_s,
                            const std::string& best);
  static std::string format_duration(double seconds);  // "9s", "4m05s", "2h03m"

 private:
  void draw(bool force);
  std::size_t total_, done_ = 0, fresh_ = 0;
  bool enabled_;
  bool tty_;
  std::FILE* out_;
  std::string best_;
  std::optional<double> best_ms_;
  std::string best_problem_;
  std::chrono::steady_clock::time_point start_, last_draw_{};
};

}  // namespace gdn::tuner
