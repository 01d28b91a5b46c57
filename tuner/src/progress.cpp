#include "gdn/tuner/progress.hpp"
#include "gdn/text/number.hpp"

#include <cmath>
#include <unistd.h>

namespace gdn::tuner {

using Clock = std::chrono::steady_clock;

ProgressLine::ProgressLine(std::size_t total, bool enabled, std::FILE* out)
    : total_(total), enabled_(enabled), tty_(::isatty(::fileno(out)) == 1), out_(out), start_(Clock::now()) {}

std::string ProgressLine::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const auto secs = static_cast<long long>(std::llround(s));
  char buf[32];
  if (secs < 60) std::snprintf(buf, sizeof buf, "%llds", secs);
  else if (secs < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", secs / 60, secs % 60);
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", secs / 3600, (secs % 3600) / 60);
  return buf;
}

std::string ProgressLine::render(std::size_t done, std::size_t total, double rate, const std::string& best) {
  char buf[160];
  const double pct = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  const std::size_t left = total > done ? total - done : 0;
  std::snprintf(buf, sizeof buf, "[%5zu/%zu %3.0f%%] %.1f/s ETA %s", done, total, pct, rate,
                rate > 0 ? format_duration(static_cast<double>(left) / rate).c_str() : "?");
  std::string line = buf;
  if (!best.empty()) line += " | best " + best;
  return line;
}

void ProgressLine::advance(bool fresh) {
  ++done_;
  if (fresh) ++fresh_;
  if (done_ > total_) total_ = done_;  // halving's total is an upper bound; never show > 100 %
  draw(false);
}

void ProgressLine::note_best(const std::string& problem, const std::string& variant, double p50_ms) {
  // "Best so far" of the problem being measured: a new problem starts a new race.
  if (problem != best_problem_ || !best_ms_ || p50_ms < *best_ms_) {
    best_problem_ = problem;
    best_ms_ = p50_ms;
    best_ = problem + ": " + variant + " " + text::significant(p50_ms, 4) + " ms";
  }
}

void ProgressLine::draw(bool force) {
  if (!enabled_) return;
  const auto now = Clock::now();
  // A terminal gets the line redrawn in place; a log file gets a plain line now and then.
  const auto period = tty_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(10000);
  if (!force && now - last_draw_ < period) return;
  last_draw_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(fresh_) / secs : 0;
  if (tty_) std::fprintf(out_, "\r%s\033[K", render(done_, total_, rate, best_).c_str());
  else std::fprintf(out_, "%s\n", render(done_, total_, rate, best_).c_str());
  std::fflush(out_);
}

void ProgressLine::finish() {
  if (!enabled_) return;
  total_ = done_;
  draw(true);
  if (tty_) std::fputc('\n', out_);
}

}  // namespace gdn::tuner
