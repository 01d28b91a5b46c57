// The sweep coordinator (see sweep.hpp).
#include "gdn/tuner/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "gdn/db/model.hpp"
#include "gdn/db/writer.hpp"
#include "gdn/profiler/nvtx.hpp"
#include "gdn/profiler/protocol.hpp"
#include "gdn/text/number.hpp"
#include "gdn/tuner/gate_problem.hpp"
#include "gdn/tuner/progress.hpp"
#include "gdn/tuner/shard.hpp"
#include "gdn/tuner/stop_signals.hpp"
#include "gdn/tuner/strategy.hpp"
#include "gdn/tuner/worker_pool.hpp"
#include "sweep_plan.hpp"

namespace gdn::tuner {

namespace {

using Clock = std::chrono::steady_clock;
using Pair = std::pair<std::size_t, std::size_t>;  // (variant index, problem index)

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The protocol columns of a sweep: what its precise measurements used.
db::ProtocolRecord protocol_record(const profiler::Protocol& p) {
  return {p.warmup_calls, p.min_samples, p.max_samples, p.target_rel_spread,
          p.time_cap_ms, static_cast<std::int64_t>(p.l2_flush_bytes), p.use_graphs};
}

bool same_protocol(const db::ProtocolRecord& a, const db::ProtocolRecord& b) {
  return a.warmup_iters == b.warmup_iters && a.min_samples == b.min_samples &&
         a.max_samples == b.max_samples && a.target_rel_spread == b.target_rel_spread &&
         a.time_cap_ms == b.time_cap_ms && a.l2_flush_bytes == b.l2_flush_bytes &&
         a.use_graphs == b.use_graphs;
}

std::string describe(const db::ProtocolRecord& p) {
  return "protocol: warm-up " + std::to_string(p.warmup_iters) + ", samples " + std::to_string(p.min_samples) +
         ".." + std::to_string(p.max_samples) + ", target spread " + text::shortest(p.target_rel_spread) +
         ", time cap " + text::shortest(p.time_cap_ms) + " ms";
}

// Finds the sweep --resume continues: the newest one with identical canonical arguments and
// stored protocol (the args name only non-default protocol options, so the stored columns
// also guard against a build whose Protocol::precise() differs). Runs before anything is
// registered, so a refused resume writes nothing.
// Shape sets are compared by content: the same name or path may hold other problems now, and
// the results of two sets are never mixed in one sweep.
void check_same_shape_sets(const db::Database& db, const db::SweepSummary& s, const SweepPlan& plan) {
  std::map<std::string, std::string> planned;  // shape-set name -> content hash
  for (const auto& p : plan.problems) planned[p.record.shape_set_name] = p.record.shape_set_hash;
  db::ResultQuery q;
  q.sweep_id = s.sweep.id;
  for (const auto& row : db::query_results(db, q)) {
    const auto it = planned.find(row.problem.shape_set_name);
    if (it == planned.end() || it->second == row.problem.shape_set_hash) continue;
    throw std::invalid_argument("--resume: the shape set '" + row.problem.shape_set_name + "' changed since sweep " +
                                std::to_string(s.sweep.id) + " measured it (content hash " +
                                row.problem.shape_set_hash + " then, " + it->second +
                                " now); results of two different sets are never mixed: start a new sweep");
  }
}

db::SweepSummary find_resumable(const db::Database& db, const std::string& args,
                                const db::ProtocolRecord& protocol, const SweepPlan& plan) {
  const auto sweeps = db::list_sweeps(db);
  for (const auto& s : sweeps) {
    if (s.sweep.args != args || !same_protocol(s.sweep.protocol, protocol)) continue;
    if (s.sweep.status == db::SweepStatus::Finished)
      throw std::invalid_argument("--resume: sweep " + std::to_string(s.sweep.id) +
                                  " with these arguments already finished");
    check_same_shape_sets(db, s, plan);
    return s;
  }
  std::string msg = "--resume: no unfinished sweep in '" + db.path() + "' has the arguments\n  " + args +
                    "\n  " + describe(protocol);
  for (const auto& s : sweeps)
    if (s.sweep.status != db::SweepStatus::Finished)
      msg += "\nunfinished sweep " + std::to_string(s.sweep.id) + " has\n  " + s.sweep.args + "\n  " +
             describe(s.sweep.protocol);
  throw std::invalid_argument(msg);
}

// --resume-or-start: the newest sweep with the same arguments and protocol, finished or not.
std::optional<db::SweepSummary> find_same(const db::Database& db, const std::string& args,
                                          const db::ProtocolRecord& protocol, const SweepPlan& plan) {
  for (const auto& s : db::list_sweeps(db))
    if (s.sweep.args == args && same_protocol(s.sweep.protocol, protocol)) {
      check_same_shape_sets(db, s, plan);
      return s;
    }
  return std::nullopt;
}

// Results of two kinds of device or two builds are never mixed in one sweep. Another GPU of
// the same kind (a requeued batch job lands on another node) continues it, and each result it
// measures names that GPU (ResultRecord::device_id).
void check_same_provenance(const db::SweepSummary& s, const db::DeviceRecord& device, std::int64_t build_id) {
  if (s.sweep.device_id != device.id && !db::same_device_kind(s.device, device))
    throw std::invalid_argument("--resume: sweep " + std::to_string(s.sweep.id) + " ran on device '" + s.device.name +
                                "' (" + s.device.uuid + ", driver " + s.device.driver_version + ", " +
                                std::to_string(s.device.sm_clock_mhz) + " MHz); this device ('" + device.name +
                                "', " + device.uuid + ", driver " + device.driver_version + ", " +
                                std::to_string(device.sm_clock_mhz) +
                                " MHz) is of another kind, and results of two kinds of device are never mixed");
  if (s.sweep.build_id != build_id)
    throw std::invalid_argument("--resume: sweep " + std::to_string(s.sweep.id) + " was measured by build " +
                                s.build.git_sha + " [" + s.build.flags +
                                "]; this build differs, and results of two builds are never mixed");
}

struct Stored {
  db::Outcome outcome;
  std::optional<double> p50;
};

class Engine {
 public:
  Engine(const SweepOptions& o, SweepPlan& plan, db::Database& db, db::ResultsWriter& w,
         std::int64_t sweep_id, WorkerPool& pool, ProgressLine& progress, SweepOutcome& out)
      : o_(o), plan_(plan), db_(db), w_(w), sweep_id_(sweep_id), pool_(pool), progress_(progress), out_(out) {
    db::ResultQuery q;
    q.sweep_id = sweep_id;
    for (const auto& row : db::query_results(db, q))
      stored_[{row.result.variant_id, row.result.problem_id}] = {row.result.outcome, row.result.latency_p50_ms};
  }

  // Variants that cannot run at all (invalid or not compiled) get one result, on the first
  // problem: the reason does not depend on the problem, and the full space ("all") would
  // otherwise fill the database with thousands of identical rejections.
  void record_rejected() {
    if (plan_.problems.empty() || !shard_.records_rejected()) return;
    for (std::size_t v = 0; v < plan_.variants.size(); ++v) {
      if (plan_.variants[v].runnable) continue;
      if (stored(v, 0)) {
        ++out_.answered_from_db;
        progress_.advance(false);
        continue;
      }
      db::ResultRecord r;
      r.outcome = db::Outcome::CompileRejected;
      r.message = plan_.variants[v].reject_reason + " (recorded once, on the first problem: it applies to all)";
      r.metrics.unavailable_reason = "not measured: CompileRejected";
      commit(v, 0, r, {}, {});
    }
  }

  std::vector<TrialScore> measure(std::span<const Trial> trials) {
    throw_if_stop_requested();
    settle_eliminated(trials);
    std::vector<TrialScore> scores(trials.size());
    std::vector<std::size_t> need;  // positions of trials a worker must measure
    for (std::size_t i = 0; i < trials.size(); ++i) {
      // Another shard's trial: not measured here. It scores as failed, which the strategies
      // allow: exhaustive and random ignore scores, and halving shards whole problems, so a
      // problem's race never mixes owned and foreign trials.
      if (!shard_.owns(trials[i].variant, trials[i].problem)) continue;
      const auto v = runnable_[trials[i].variant], p = trials[i].problem;
      if (const auto* s = stored(v, p)) {
        scores[i] = {s->outcome == db::Outcome::Passed && s->p50.has_value(), s->p50.value_or(0)};
        ++out_.answered_from_db;
        progress_.advance(false);
        continue;
      }
      const auto impl = plan_.implementable(plan_.variants[v], plan_.problems[p]);
      if (!impl.ok) {
        db::ResultRecord r;
        r.outcome = db::Outcome::Unsupported;
        r.message = impl.reason;
        r.metrics.unavailable_reason = "not measured: Unsupported";
        commit(v, p, r, {}, {});
        continue;
      }
      need.push_back(i);
    }
    run_gates(trials, need);

    std::vector<TrialRequest> requests;
    std::map<std::uint64_t, std::size_t> position;  // request id -> trial position
    for (std::size_t i : need) {
      const auto v = runnable_[trials[i].variant], p = trials[i].problem;
      const auto& gate = gates_.at({v, family_key(plan_.problems[p].record)});
      if (gate.result.outcome != db::Outcome::Passed) {
        commit(v, p, gate_failure(gate), {}, {});
        continue;
      }
      auto req = request(RequestKind::Measure, v, plan_.problems[p].record, layout_of(p));
      req.rung = trials[i].rung;
      position[req.id] = i;
      requests.push_back(std::move(req));
    }
    const auto t0 = Clock::now();
    double busy_ms = 0;
    auto record = [&](const TrialRequest& req, TrialOutput&& o, const RoundTrip& rt) {
      const auto i = position.at(req.id);
      const auto v = runnable_[trials[i].variant], p = trials[i].problem;
      busy_ms += o.worker_busy_ms;
      round_trips_.push_back(std::max(0.0, rt.wall_ms - o.worker_busy_ms));
      const auto& gate = gates_.at({v, family_key(plan_.problems[p].record)});
      if (o.result.outcome == db::Outcome::Passed && !o.result.max_rel_rms) {
        o.result.max_rel_rms = gate.result.max_rel_rms;
        o.result.errors_json = gate.result.errors_json;
      }
      const bool passed = o.result.outcome == db::Outcome::Passed && o.result.latency_p50_ms;
      scores[i] = {passed, o.result.latency_p50_ms.value_or(0)};
      if (passed) progress_.note_best(plan_.problems[p].label, plan_.variants[v].record.name, *o.result.latency_p50_ms);
      // A passing cheap measurement is not final: the pair may be measured again at a later
      // rung. It is committed once it is eliminated (settle_eliminated) - one row per pair.
      if (passed && trials[i].rung >= 0) {
        pending_cheap_[{v, p}] = {std::move(o), trials[i].rung};
        progress_.advance(true);
        return;
      }
      pending_cheap_.erase({v, p});
      commit(v, p, o.result, o.samples_ms, o.pm_timeline);
    };
    pool_.run(requests, [&](const TrialRequest& req, TrialOutput&& o, const RoundTrip& rt) {
      // A failure that arrives after a stop signal is the signal's doing (a worker in the same
      // process group, a measurement cut short), not the variant's: it is not recorded.
      if (StopSignals::requested() && o.result.outcome != db::Outcome::Passed)
        throw_if_stop_requested();
      record(req, std::move(o), rt);
      throw_if_stop_requested();
    });
    measured_ += requests.size();
    outside_worker_ms_ += std::max(0.0, ms_since(t0) - busy_ms / static_cast<double>(o_.gpus.size()));
    return scores;
  }

  // After SIGINT/SIGTERM (StopSignals): stop here; run_sweep marks the sweep interrupted.
  void throw_if_stop_requested() const {
    const int sig = StopSignals::requested();
    if (sig == 0) return;
    throw SweepStopped(sig, std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                             ": the sweep is marked interrupted and keeps every result committed so "
                             "far; run the same command with --resume to continue it");
  }

  // Pairs whose cheap measurement was not followed by another one: the strategy dropped them.
  void settle_eliminated(std::span<const Trial> next) {
    std::set<Pair> continuing;
    for (const auto& t : next) continuing.insert({runnable_[t.variant], t.problem});
    for (auto it = pending_cheap_.begin(); it != pending_cheap_.end();) {
      if (continuing.count(it->first)) {
        ++it;
        continue;
      }
      auto& [o, rung] = it->second;
      auto r = o.result;
      r.message = "successive halving: eliminated after rung " + std::to_string(rung) +
                  " (cheap measurement, " + std::to_string(r.sample_count) + " samples)";
      commit(it->first.first, it->first.second, r, o.samples_ms, o.pm_timeline, /*counted=*/true);
      it = pending_cheap_.erase(it);
    }
  }

  std::vector<std::size_t> runnable_;  // runnable variant indices: the strategy's variant axis
  ShardFilter shard_;                  // which of the strategy's trials this sweep measures
  std::optional<std::int64_t> result_device_;  // resumed on another GPU of the kind: named per result
  std::size_t measured_ = 0;
  double outside_worker_ms_ = 0;
  std::vector<double> round_trips_, db_writes_;

 private:
  const Stored* stored(std::size_t v, std::size_t p) const {
    const auto it = stored_.find({plan_.variants[v].record.id, plan_.problems[p].record.id});
    return it == stored_.end() ? nullptr : &it->second;
  }

  std::string layout_of(std::size_t p) const {
    const auto& pp = plan_.problems[p];
    if (pp.source) return problems::layout_name(pp.source->layout);
    return pp.record.batch > 1 ? "batched" : "packed";
  }

  TrialRequest request(RequestKind kind, std::size_t v, const db::ProblemRecord& problem, std::string layout) {
    TrialRequest r;
    r.kind = kind;
    r.id = ++next_id_;
    r.variant = plan_.variants[v].record.name;
    r.pass = plan_.variants[v].record.pass;
    r.problem = problem;
    r.layout = std::move(layout);
    r.metrics = o_.metrics;
    r.pm_sampling = o_.pm_sampling;
    r.precise = o_.precise;
    return r;
  }

  // Gates needed by the trials about to be measured, once per (variant, family), in parallel.
  void run_gates(std::span<const Trial> trials, const std::vector<std::size_t>& need) {
    std::vector<TrialRequest> requests;
    std::map<std::uint64_t, std::pair<std::size_t, std::string>> key_of;
    std::set<std::pair<std::size_t, std::string>> asked;
    for (std::size_t i : need) {
      const auto v = runnable_[trials[i].variant];
      const auto& problem = plan_.problems[trials[i].problem].record;
      std::pair<std::size_t, std::string> key{v, family_key(problem)};
      if (gates_.count(key) || !asked.insert(key).second) continue;
      auto req = request(RequestKind::Gate, v, gate_problem(problem), "packed");
      key_of[req.id] = key;
      requests.push_back(std::move(req));
    }
    pool_.run(requests, [&](const TrialRequest& req, TrialOutput&& o, const RoundTrip& rt) {
      // A gate cut short by a stop signal must not stand for the variant (it would fail every
      // pair of it): stop before it is stored.
      throw_if_stop_requested();
      round_trips_.push_back(std::max(0.0, rt.wall_ms - o.worker_busy_ms));
      gates_[key_of.at(req.id)] = std::move(o);
    });
    throw_if_stop_requested();
  }

  db::ResultRecord gate_failure(const TrialOutput& gate) const {
    db::ResultRecord r;
    r.outcome = gate.result.outcome;
    r.max_rel_rms = gate.result.max_rel_rms;
    r.errors_json = gate.result.errors_json;
    const std::string where = std::string("correctness gate on packed sequences ") + kGateSeqlens;
    if (r.outcome == db::Outcome::Unsupported)
      r.message = where + " could not run, so the variant cannot be verified: " + gate.result.message;
    else
      r.message = where + ": " + gate.result.message;
    r.metrics.unavailable_reason = "not measured: the correctness gate did not pass";
    return r;
  }

  void commit(std::size_t v, std::size_t p, db::ResultRecord r, const std::vector<double>& samples,
              const std::vector<db::PmSample>& pm, bool counted = false) {
    r.sweep_id = sweep_id_;
    r.variant_id = plan_.variants[v].record.id;
    r.problem_id = plan_.problems[p].record.id;
    r.device_id = result_device_;
    const auto t0 = Clock::now();
    db::InsertedResult ins;
    try {
      ins = w_.insert_result(r, samples, pm);
    } catch (const std::exception& e) {
      // The database, not the variant, failed: the sweep stops with this error (run_sweep marks
      // it interrupted); no worker is blamed and nothing committed so far is touched.
      throw RecordingError("recording the result of " + plan_.variants[v].record.name + " on problem '" +
                           plan_.problems[p].label + "' failed: " + e.what() +
                           "; the sweep stops here, keeps every result committed so far, and --resume "
                           "continues it");
    }
    db_writes_.push_back(ms_since(t0));
    if (!ins.already_present) ++out_.committed_now;
    stored_[{r.variant_id, r.problem_id}] = {r.outcome, r.latency_p50_ms};
    if (!counted) progress_.advance(true);
  }

  const SweepOptions& o_;
  SweepPlan& plan_;
  db::Database& db_;
  db::ResultsWriter& w_;
  std::int64_t sweep_id_;
  WorkerPool& pool_;
  ProgressLine& progress_;
  SweepOutcome& out_;
  std::uint64_t next_id_ = 0;
  std::map<std::pair<std::int64_t, std::int64_t>, Stored> stored_;
  std::map<std::pair<std::size_t, std::string>, TrialOutput> gates_;
  struct Cheap {
    TrialOutput output;
    int rung;
  };
  std::map<Pair, Cheap> pending_cheap_;
};

// What the shard partition needs to know about the sweep (shard.hpp).
ShardInputs shard_inputs(const SweepOptions& o, const SweepPlan& plan, const std::vector<std::size_t>& runnable) {
  ShardInputs in;
  in.strategy = o.strategy;
  for (std::size_t v : runnable) in.variant_is_backward.push_back(plan.variants[v].record.pass == gdn::Pass::Backward);
  for (const auto& p : plan.problems)
    in.problems.push_back({family_key(p.record), {p.record.total_tokens, p.record.h_v, p.record.k, p.record.v, false}});
  return in;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

SweepOutcome run_sweep(const SweepOptions& o, const SweepEnvironment& env) {
  const auto start = Clock::now();
  validate(o);
  auto plan = make_plan(o);  // may still reject arguments (shape set, space file, GPUs)
  const auto args = canonical_args(o);

  auto database = db::Database::open(o.db_path);
  std::optional<db::SweepSummary> resumed;
  const auto protocol = protocol_record(o.precise);
  if (o.resume) resumed = find_resumable(database, args, protocol, plan);
  if (o.resume_or_start) resumed = find_same(database, args, protocol, plan);
  db::ResultsWriter writer(database);
  plan.device.id = writer.register_device(plan.device);
  const auto device_id = plan.device.id;
  const auto build_id = writer.register_build(plan.build);
  for (auto& v : plan.variants) v.record.id = writer.register_variant(v.record);
  for (auto& p : plan.problems) p.record.id = writer.register_problem(p.record);

  SweepOutcome out;
  if (resumed) {
    check_same_provenance(*resumed, plan.device, build_id);
    out.sweep_id = resumed->sweep.id;
    out.resumed = true;
    writer.set_sweep_status(out.sweep_id, db::SweepStatus::Running);
  } else {
    db::SweepRecord s;
    s.device_id = device_id;
    s.build_id = build_id;
    s.space = o.space;
    s.shapes = o.shapes.empty() ? "replay of " + o.replay_db : o.shapes;
    s.strategy = std::string(strategy_name(o.strategy.kind));
    s.budget = static_cast<std::int64_t>(o.strategy.budget);
    s.seed = static_cast<std::int64_t>(o.strategy.seed);
    s.metrics_level = std::string(profiler::to_string(o.metrics));
    s.protocol = protocol;
    s.args = args;
    out.sweep_id = writer.begin_sweep(s);
  }
  if (o.shard.sharded()) writer.mark_shard({out.sweep_id, o.shard.index, o.shard.count});
  profiler::NvtxRange sweep_range(profiler::NvtxLevel::Sweep, "sweep " + std::to_string(out.sweep_id));

  WorkerPoolOptions po;
  po.base_argv = {o.worker_exe.empty() ? env.gdnlab_exe : o.worker_exe, "worker"};
  po.base_argv.insert(po.base_argv.end(), plan.worker_args.begin(), plan.worker_args.end());
  po.gpus = o.gpus;
  po.measure_timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  po.gate_timeout = std::chrono::milliseconds(static_cast<long long>(o.gate_timeout_s * 1000));
  WorkerPool pool(po);

  std::size_t rejected_pairs = 0;
  for (const auto& v : plan.variants)
    if (!v.runnable) ++rejected_pairs;
  ProgressLine progress(0, o.progress);
  Engine engine(o, plan, database, writer, out.sweep_id, pool, progress, out);
  if (resumed && resumed->sweep.device_id != device_id) engine.result_device_ = device_id;
  for (std::size_t v = 0; v < plan.variants.size(); ++v)
    if (plan.variants[v].runnable) engine.runnable_.push_back(v);
  if (o.shard.sharded()) {
    engine.shard_ = ShardFilter(shard_inputs(o, plan, engine.runnable_), o.shard);
    progress.set_total((engine.shard_.records_rejected() ? rejected_pairs : 0) + engine.shard_.planned_trials());
  } else {
    progress.set_total(rejected_pairs + planned_trials(o.strategy, engine.runnable_.size(), plan.problems.size()));
  }

  const StopSignals stop_signals;  // Ctrl-C / `timeout`: stop at a result boundary
  try {
    engine.record_rejected();
    run_strategy(o.strategy, engine.runnable_.size(), plan.problems.size(),
                 [&](std::span<const Trial> t) { return engine.measure(t); });
    engine.settle_eliminated({});
  } catch (const std::exception& e) {
    progress.finish();
    // The first error is the one reported: when marking the sweep interrupted fails too (a full
    // disk fails both), that second failure is appended, never substituted. A sweep whose status
    // could not be written stays 'running' in the database, and --resume continues it as well.
    try {
      writer.set_sweep_status(out.sweep_id, db::SweepStatus::Interrupted);
      database.leave_wal();
    } catch (const std::exception& status_error) {
      throw RecordingError(std::string(e.what()) + " (marking the sweep interrupted failed too: " +
                           status_error.what() + ")");
    }
    throw;
  }
  progress.finish();
  writer.set_sweep_status(out.sweep_id, db::SweepStatus::Finished);
  database.leave_wal();  // readable on read-only media from now on

  const auto summary = db::sweep_summary(database, out.sweep_id);
  out.counts = summary.outcome_counts;
  out.worker_restarts = pool.restarts();
  out.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  out.overhead.measured = engine.measured_;
  out.overhead.round_trip_ms = mean(engine.round_trips_);
  out.overhead.db_write_ms = mean(engine.db_writes_);
  out.overhead.per_config_ms =
      engine.measured_ ? engine.outside_worker_ms_ / static_cast<double>(engine.measured_) : 0;
  return out;
}

std::string format_outcome(const SweepOutcome& o) {
  std::string s = "sweep " + std::to_string(o.sweep_id) + (o.resumed ? " (resumed)" : "") + ": ";
  std::int64_t total = 0;
  for (std::size_t i = 0; i < db::kOutcomeCount; ++i) {
    total += o.counts[i];
    if (o.counts[i] == 0) continue;
    s += std::string(db::to_string(db::kAllOutcomes[i])) + " " + std::to_string(o.counts[i]) + ", ";
  }
  s += std::to_string(total) + " results (" + std::to_string(o.committed_now) + " committed now, " +
       std::to_string(o.answered_from_db) + " already stored)";
  return s + "\nwall " + text::fixed(o.wall_s, 1) + " s; worker restarts " + std::to_string(o.worker_restarts) +
         "\nrunner overhead per configuration: " + text::fixed(o.overhead.per_config_ms, 3) +
         " ms (pipe round trip " + text::fixed(o.overhead.round_trip_ms, 3) + " ms, DB commit " +
         text::fixed(o.overhead.db_write_ms, 3) + " ms; " + std::to_string(o.overhead.measured) +
         " configurations through workers)";
}

}  // namespace gdn::tuner
