// Dispatch loop of the worker pool (see worker_pool.hpp).
#include "gdn/tuner/worker_pool.hpp"

#include <deque>
#include <optional>
#include <poll.h>
#include <stdexcept>

namespace gdn::tuner {

using Clock = std::chrono::steady_clock;

struct WorkerPool::Slot {
  int gpu = 0;
  std::unique_ptr<WorkerProcess> process;
  std::optional<TrialRequest> busy;  // the request in flight
  Clock::time_point sent_at{};
  Clock::time_point deadline{};
};

WorkerPool::WorkerPool(WorkerPoolOptions options) : opt_(std::move(options)) {
  if (opt_.gpus.empty()) throw std::invalid_argument("worker pool: no GPU given");
  for (int gpu : opt_.gpus) {
    auto s = std::make_unique<Slot>();
    s->gpu = gpu;
    slots_.push_back(std::move(s));
  }
}

WorkerPool::~WorkerPool() {
  for (auto& s : slots_)
    if (s->process && s->process->running()) {
      s->process->send_line("quit");
      s->process->reap(std::chrono::milliseconds(2000));
    }
}

// Starts (or restarts) a worker and waits for its "ready" line, so a worker that cannot
// initialise (no device, unreadable replay database) fails loudly instead of crashing every
// request it is given.
void WorkerPool::start_slot(Slot& s) {
  auto argv = opt_.base_argv;
  argv.push_back("--gpu");
  argv.push_back(std::to_string(s.gpu));
  s.process = std::make_unique<WorkerProcess>(argv);
  s.process->start();
  std::string line;
  const auto st = s.process->read_line(line, Clock::now() + opt_.startup_timeout);
  if (st == WorkerProcess::ReadStatus::Line) {
    const auto m = wire::decode(line);
    if (m.verb == "ready") return;
    if (m.verb == "fatal")
      throw std::runtime_error("worker for GPU " + std::to_string(s.gpu) + " could not start: " +
                               m.str("message"));
    throw std::runtime_error("worker for GPU " + std::to_string(s.gpu) +
                             " sent '" + m.verb + "' instead of 'ready'");
  }
  const std::string how = st == WorkerProcess::ReadStatus::TimedOut
                              ? "did not report ready within the startup timeout; " + s.process->kill_and_reap()
                              : s.process->reap(std::chrono::milliseconds(2000));
  throw std::runtime_error("worker for GPU " + std::to_string(s.gpu) + " failed to start: " + how);
}

TrialOutput WorkerPool::failure(const TrialRequest& r, db::Outcome outcome, std::string message) const {
  TrialOutput o;
  o.id = r.id;
  o.result.outcome = outcome;
  o.result.message = std::move(message);
  o.result.metrics.unavailable_reason = "not measured: " + std::string(db::to_string(outcome));
  return o;
}

void WorkerPool::run(std::span<const TrialRequest> requests, const OnDone& on_done) {
  std::deque<const TrialRequest*> pending;
  for (const auto& r : requests) pending.push_back(&r);
  std::size_t in_flight = 0;
  auto finish = [&](Slot& s, TrialOutput&& out) {
    const TrialRequest req = *s.busy;
    s.busy.reset();
    --in_flight;
    RoundTrip rt{std::chrono::duration<double, std::milli>(Clock::now() - s.sent_at).count()};
    on_done(req, std::move(out), rt);
  };
  auto lost_worker = [&](Slot& s, db::Outcome outcome, const std::string& how) {
    const auto& r = *s.busy;
    const std::string what = r.kind == RequestKind::Gate ? "correctness gate" : "measurement";
    auto out = failure(r, outcome,
                       (outcome == db::Outcome::Timeout
                            ? what + " did not finish within the timeout; worker " + how
                            : "worker died during the " + what + ": " + how));
    s.process.reset();
    ++restarts_;
    finish(s, std::move(out));
  };

  // Leaving by an exception (a worker that cannot start, a recording error from on_done):
  // the requests still in flight are abandoned and their workers stopped, so the pool holds no
  // half-answered request and the caller's stop is not delayed by a running measurement.
  struct Abandon {
    WorkerPool& pool;
    ~Abandon() {
      for (auto& sp : pool.slots_)
        if (sp->busy) {
          sp->busy.reset();
          if (sp->process) sp->process->kill_and_reap();
          sp->process.reset();
        }
    }
  } abandon{*this};

  while (!pending.empty() || in_flight > 0) {
    for (auto& sp : slots_) {
      Slot& s = *sp;
      if (s.busy || pending.empty()) continue;
      if (!s.process || !s.process->running()) start_slot(s);
      s.busy = *pending.front();
      pending.pop_front();
      ++in_flight;
      s.sent_at = Clock::now();
      s.deadline = s.sent_at + (s.busy->kind == RequestKind::Gate ? opt_.gate_timeout : opt_.measure_timeout);
      if (!s.process->send_line(wire::encode(encode_request(*s.busy))))
        lost_worker(s, db::Outcome::Crashed, s.process->reap(std::chrono::milliseconds(2000)));
    }
    if (in_flight == 0) continue;

    std::vector<pollfd> fds;
    std::vector<Slot*> owners;
    auto next_deadline = Clock::time_point::max();
    for (auto& sp : slots_)
      if (sp->busy) {
        fds.push_back({sp->process->output_fd(), POLLIN, 0});
        owners.push_back(sp.get());
        next_deadline = std::min(next_deadline, sp->deadline);
      }
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now()).count();
    ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait_ms, 0, 1000)));

    for (std::size_t i = 0; i < owners.size(); ++i) {
      Slot& s = *owners[i];
      if (!s.busy) continue;
      bool alive = true;
      if (fds[i].revents != 0) alive = s.process->pump();
      if (auto line = s.process->take_line()) {
        // Decoding is the worker's responsibility, recording (on_done) the coordinator's: only
        // a garbled answer replaces the worker. An exception from on_done (a database error)
        // leaves run() as it is, so it is never blamed on the worker nor counted twice.
        std::optional<TrialOutput> out;
        std::string garbled;
        try {
          out = decode_output(wire::decode(*line));
          if (out->id != s.busy->id)
            throw std::runtime_error("answer for request " + std::to_string(out->id) +
                                     " while request " + std::to_string(s.busy->id) + " was in flight");
        } catch (const std::exception& e) {
          out.reset();
          garbled = e.what();
        }
        if (!out) {
          // A garbled answer means the worker is in an unknown state: replace it.
          lost_worker(s, db::Outcome::Crashed,
                      "sent a malformed answer (" + garbled + "); " + s.process->kill_and_reap());
          continue;
        }
        if (out->worker_exiting) {  // it said it would exit: reap it now so no request is sent to it
          s.process->reap(std::chrono::milliseconds(5000));
          s.process.reset();
          ++restarts_;
        }
        finish(s, std::move(*out));
        continue;
      }
      if (!alive) {
        lost_worker(s, db::Outcome::Crashed, s.process->reap(std::chrono::milliseconds(2000)));
        continue;
      }
      if (Clock::now() >= s.deadline) lost_worker(s, db::Outcome::Timeout, "killed: " + s.process->kill_and_reap());
    }
  }
}

}  // namespace gdn::tuner
