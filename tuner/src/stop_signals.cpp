#include "gdn/tuner/stop_signals.hpp"

namespace gdn::tuner {

namespace {

volatile std::sig_atomic_t g_requested = 0;

extern "C" void note_stop_signal(int sig) { g_requested = sig; }

}  // namespace

StopSignals::StopSignals() {
  g_requested = 0;
  struct sigaction sa {};
  sa.sa_handler = note_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking poll/read returns and the loop looks again
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::requested() { return g_requested; }

void ignore_stop_signals() {
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
}

}  // namespace gdn::tuner
