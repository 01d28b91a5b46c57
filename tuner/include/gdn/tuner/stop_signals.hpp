// SIGINT/SIGTERM during a sweep: stop at the next result instead of dying mid-write.
//
// Why: a sweep killed by Ctrl-C or by `timeout` (the lent GPU's 10-minute command limit) used
// to stay 'running' in the database, and a worker killed by the same signal (a terminal and
// `timeout` signal the whole process group) had its in-flight trial recorded as Crashed. With
// StopSignals alive, the coordinator notes the signal, commits what finished normally, drops
// what the signal broke, marks the sweep interrupted and tells how to resume; workers ignore
// both signals (ignore_stop_signals) and leave when the coordinator says quit or goes away.
#pragma once

#include <csignal>

namespace gdn::tuner {

class StopSignals {
 public:
  StopSignals();   // installs the handlers and clears any earlier request
  ~StopSignals();  // restores the previous handlers
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that asked to stop (SIGINT or SIGTERM), 0 while none has.
  static int requested();

 private:
  struct sigaction old_int_{}, old_term_{};
};

// For worker processes: the coordinator decides when they stop.
void ignore_stop_signals();

}  // namespace gdn::tuner
