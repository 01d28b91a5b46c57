// Replay backend: answers gates and measurements from a recorded sweep, reproducing what a
// live worker would have returned at the requested fidelity (a cheap rung sees only the first
// samples the protocol of that rung would have taken; a precise protocol other than the
// recording's sees the samples its stop rule would have kept).
#include <algorithm>
#include <span>

#include "gdn/profiler/stats.hpp"
#include "gdn/tuner/backend.hpp"
#include "gdn/tuner/fidelity.hpp"
#include "gdn/tuner/gate_problem.hpp"
#include "gdn/tuner/replay_source.hpp"

namespace gdn::tuner {

namespace {

void restrict_metrics(db::MetricsRecord& m, profiler::MetricSet asked, int rung) {
  if (asked == profiler::MetricSet::None || !rung_is_precise(rung)) {
    m = db::MetricsRecord{};
    m.unavailable_reason = asked == profiler::MetricSet::None
                               ? "not requested (--metrics none)"
                               : "cheap rung: counters are read for the final measurement only";
    return;
  }
  if (asked == profiler::MetricSet::Basic) {
    m.sm_throughput_pct.reset();
    m.memory_sol_pct.reset();
  }
}

// Keeps the first `n` samples and recomputes the figures derived from them.
void keep_first(TrialOutput& out, std::size_t n) {
  if (out.samples_ms.size() > n) out.samples_ms.resize(n);
  const auto q = profiler::quantiles(out.samples_ms);
  out.result.latency_p20_ms = q.p20;
  out.result.latency_p50_ms = q.p50;
  out.result.latency_p80_ms = q.p80;
  out.result.rel_spread = profiler::relative_spread(out.samples_ms);
}

// How many recorded samples a live loop under `p` would have kept: the stop rule checked after
// every sample, with the elapsed time taken as the sum of the samples so far. That sum is the
// kernel time only, a lower bound of the loop's wall time (which also pays flushes and
// launches), so a replayed time cap stops no earlier than a live one would.
std::size_t stop_rule_count(const profiler::Protocol& p, const std::vector<double>& samples) {
  double elapsed_ms = 0;
  for (std::size_t n = 1; n <= samples.size(); ++n) {
    elapsed_ms += samples[n - 1];
    if (profiler::stop_decision(p, std::span(samples.data(), n), elapsed_ms) != profiler::StopReason::NotYet)
      return n;
  }
  return samples.size();
}

bool recorded_with(const db::ProtocolRecord& rec, const profiler::Protocol& p) {
  return rec.warmup_iters == p.warmup_calls && rec.min_samples == p.min_samples &&
         rec.max_samples == p.max_samples && rec.target_rel_spread == p.target_rel_spread &&
         rec.time_cap_ms == p.time_cap_ms;
}

class ReplayBackend final : public MeasureBackend {
 public:
  explicit ReplayBackend(ReplaySource src) : src_(std::move(src)) {}

  TrialOutput gate(const TrialRequest& r) override {
    // The recorded sweep's verdict on this variant for the family: any Incorrect row wins
    // (a failure must not be replayed as a pass), then any row with error figures.
    TrialOutput out;
    out.id = r.id;
    const auto family = family_key(r.problem);
    const db::ResultRow* with_figures = nullptr;
    const db::ResultRow* failed = nullptr;
    for (const auto* row : src_.rows_of(r.variant)) {
      if (family_key(row->problem) != family) continue;
      if (row->result.outcome == db::Outcome::Incorrect && !failed) failed = row;
      if (row->result.max_rel_rms && !with_figures) with_figures = row;
    }
    if (const auto* row = failed ? failed : with_figures) {
      out.result.outcome = row->result.outcome == db::Outcome::Incorrect ? db::Outcome::Incorrect
                                                                         : db::Outcome::Passed;
      out.result.max_rel_rms = row->result.max_rel_rms;
      out.result.errors_json = row->result.errors_json;
      out.result.message = "replayed gate figures of result " + std::to_string(row->result.id);
    } else {
      // Nothing to judge by: let every pair replay its own recorded outcome.
      out.result.outcome = db::Outcome::Passed;
      out.result.message = "replay: the recording has no correctness figures for " + r.variant + " on " + family +
                           "; recorded outcomes are replayed per problem";
    }
    return out;
  }

  TrialOutput measure(const TrialRequest& r) override {
    TrialOutput out;
    out.id = r.id;
    const auto* row = src_.find(r.variant, r.problem);
    if (!row) {
      out.result.outcome = db::Outcome::Unsupported;
      out.result.message = "replay: " + r.variant + " on " + problem_shape_key(r.problem) +
                           " is not recorded in " + src_.path();
      out.result.metrics.unavailable_reason = "not recorded";
      return out;
    }
    out.result = row->result;
    out.result.id = out.result.sweep_id = out.result.variant_id = out.result.problem_id = 0;
    restrict_metrics(out.result.metrics, r.metrics, r.rung);
    if (row->result.outcome != db::Outcome::Passed) return out;
    out.samples_ms = src_.samples(row->result.id);
    if (!rung_is_precise(r.rung) && !out.samples_ms.empty()) {
      keep_first(out, static_cast<std::size_t>(protocol_for_rung(r.rung, r.precise).min_samples));
      out.result.message = "cheap measurement (halving rung " + std::to_string(r.rung) + ")";
    } else if (!out.samples_ms.empty() && !recorded_with(src_.sweep().sweep.protocol, r.precise)) {
      // Recorded samples are all a replay has: a protocol asking for more gets the row as
      // recorded, untouched.
      const std::size_t recorded = out.samples_ms.size();
      if (const std::size_t keep = stop_rule_count(r.precise, out.samples_ms); keep < recorded) {
        keep_first(out, keep);
        out.result.message += "; replay under this sweep's protocol: first " + std::to_string(keep) + " of " +
                              std::to_string(recorded) + " recorded samples";
      }
    }
    out.result.sample_count = static_cast<int>(out.samples_ms.size());
    if (r.pm_sampling && rung_is_precise(r.rung)) out.pm_timeline = src_.pm_timeline(row->result.id);
    return out;
  }

 private:
  ReplaySource src_;
};

}  // namespace

std::unique_ptr<MeasureBackend> make_replay_backend(const std::string& db_path,
                                                    std::optional<std::int64_t> sweep_id) {
  return std::make_unique<ReplayBackend>(ReplaySource::load(db_path, sweep_id));
}

}  // namespace gdn::tuner
