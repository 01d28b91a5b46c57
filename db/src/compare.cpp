// Two sweeps side by side: provenance differences stated, per-problem best times classed by
// the measured noise ([p20, p80] bands).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "gdn/db/model.hpp"

namespace gdn::db {

namespace {

// Problems of different shape sets are the same problem when their shapes agree.
using ShapeKey = std::tuple<int, int, int, int, int, std::string, int, std::string>;
ShapeKey shape_key(gdn::Pass pass, const ProblemRecord& p) {
  return {static_cast<int>(pass), p.h_qk, p.h_v, p.k, p.v, p.dtype, p.batch, p.seqlens};
}
ShapeKey shape_key(const ProblemBest& pb) { return shape_key(pb.pass, pb.problem); }

template <class T>
void note_difference(std::string& out, const char* what, const T& a, const T& b) {
  if (a == b) return;
  if constexpr (std::is_arithmetic_v<T>)
    out += (out.empty() ? "" : "; ") + std::string(what) + " " + std::to_string(a) + " vs " + std::to_string(b);
  else
    out += (out.empty() ? "" : "; ") + std::string(what) + " " + a + " vs " + b;
}

std::string device_differences(const DeviceRecord& a, const DeviceRecord& b) {
  std::string out;
  note_difference(out, "name", a.name, b.name);
  note_difference(out, "uuid", a.uuid, b.uuid);
  note_difference(out, "SMs", a.sm_count, b.sm_count);
  note_difference(out, "cc", std::to_string(a.cc_major) + "." + std::to_string(a.cc_minor),
                  std::to_string(b.cc_major) + "." + std::to_string(b.cc_minor));
  note_difference(out, "SM clock MHz", a.sm_clock_mhz, b.sm_clock_mhz);
  note_difference(out, "memory clock MHz", a.mem_clock_mhz, b.mem_clock_mhz);
  note_difference(out, "memory bytes", a.memory_bytes, b.memory_bytes);
  note_difference(out, "L2 bytes", a.l2_bytes, b.l2_bytes);
  note_difference(out, "driver", a.driver_version, b.driver_version);
  note_difference(out, "CUDA", a.cuda_version, b.cuda_version);
  return out;
}

std::string build_differences(const BuildRecord& a, const BuildRecord& b) {
  std::string out;
  note_difference(out, "git", a.git_sha, b.git_sha);
  note_difference(out, "flags", a.flags, b.flags);
  note_difference(out, "variant set", a.variant_set, b.variant_set);
  return out;
}

// A result's noise band; a result without quantiles has a band of its p50 alone.
struct Band {
  double p20, p50, p80;
};
Band band_of(const ResultRecord& r) {
  const double p50 = *r.latency_p50_ms;
  return {r.latency_p20_ms.value_or(p50), p50, r.latency_p80_ms.value_or(p50)};
}

Difference classify(const ResultRecord& a, const ResultRecord& b) {
  const Band ba = band_of(a), bb = band_of(b);
  return classify_difference(ba.p20, ba.p50, ba.p80, bb.p20, bb.p50, bb.p80);
}

// A sweep's Passed results with a median, keyed by problem shape and candidate name.
std::map<std::pair<ShapeKey, std::string>, ResultRow> passed_by_candidate(const Database& db,
                                                                           std::int64_t sweep_id) {
  ResultQuery q;
  q.sweep_id = sweep_id;
  std::map<std::pair<ShapeKey, std::string>, ResultRow> out;
  for (ResultRow& r : query_results(db, q))
    if (r.result.outcome == Outcome::Passed && r.result.latency_p50_ms)
      out.emplace(std::pair{shape_key(r.variant.pass, r.problem), r.variant.name}, std::move(r));
  return out;
}

// Candidate a of sweep A against candidate b of sweep B on one problem (a's).
CandidateComparison paired(const ResultRow& a, const ResultRow& b) {
  return {a.problem, a.variant.pass, a.variant.name, a.variant.name == b.variant.name ? std::string() : b.variant.name,
          a, b, *b.result.latency_p50_ms / *a.result.latency_p50_ms, classify(a.result, b.result)};
}

// In sweep A's problem order, then by candidate name (B's where they differ).
void sort_pairs(std::vector<CandidateComparison>& pairs) {
  std::stable_sort(pairs.begin(), pairs.end(), [](const CandidateComparison& x, const CandidateComparison& y) {
    return std::tie(x.problem.id, x.candidate, x.candidate_b) < std::tie(y.problem.id, y.candidate, y.candidate_b);
  });
}

ProblemComparison compare_one(const ProblemBest* a, const ProblemBest* b) {
  ProblemComparison c;
  c.problem = a ? a->problem : b->problem;
  c.pass = a ? a->pass : b->pass;
  if (a) c.best_a = a->best;
  if (b) c.best_b = b->best;
  if (!c.best_a || !c.best_b) {
    c.note = !a || !b ? std::string("problem measured in only one sweep")
                      : std::string("no Passed result in sweep ") + (c.best_a ? "B" : "A");
    if (!c.best_a && !c.best_b && a && b) c.note = "no Passed result in either sweep";
    return c;
  }
  c.difference = classify(c.best_a->result, c.best_b->result);
  c.ratio = *c.best_b->result.latency_p50_ms / *c.best_a->result.latency_p50_ms;
  if (c.difference == Difference::Unclear)
    c.note = "noise bands overlap partly: repeat with more samples";
  return c;
}

}  // namespace

std::optional<double> geometric_mean(const std::vector<double>& ratios) {
  double log_sum = 0;
  int n = 0;
  for (const double r : ratios) {
    if (!(r > 0) || !std::isfinite(r)) continue;
    log_sum += std::log(r);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / n);
}

std::vector<CandidateComparison> compare_candidates(SweepRef a, SweepRef b) {
  const auto in_a = passed_by_candidate(a.db, a.id);
  const auto in_b = passed_by_candidate(b.db, b.id);
  std::vector<CandidateComparison> out;
  for (const auto& [key, ra] : in_a)
    if (const auto it = in_b.find(key); it != in_b.end()) out.push_back(paired(ra, it->second));
  sort_pairs(out);
  return out;
}

std::vector<CandidateComparison> compare_pinned(SweepRef a, SweepRef b, const gdn::PlanField& field, int value) {
  const auto in_a = passed_by_candidate(a.db, a.id);
  const auto in_b = passed_by_candidate(b.db, b.id);
  std::vector<CandidateComparison> out;
  for (const auto& [key, rb] : in_b) {
    const gdn_launch_options& pins = rb.variant.pins;
    if (pins.*field.member != value) continue;
    // The candidate's name is its config's followed by its pins' suffix (pins_suffix).
    const std::string suffix = gdn::pins_suffix(pins);
    const std::string& name = rb.variant.name;
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    gdn_launch_options rule = pins;
    rule.*field.member = GDN_PLAN_RULE;
    const std::string base = name.substr(0, name.size() - suffix.size()) + gdn::pins_suffix(rule);
    if (const auto it = in_a.find({key.first, base}); it != in_a.end()) out.push_back(paired(it->second, rb));
  }
  sort_pairs(out);
  return out;
}

std::string_view to_string(Difference d) {
  switch (d) {
    case Difference::Same: return "same";
    case Difference::Faster: return "faster";
    case Difference::Slower: return "slower";
    case Difference::Unclear: return "unclear";
  }
  return "unclear";
}

Difference classify_difference(double a_p20, double a_p50, double a_p80, double b_p20,
                               double b_p50, double b_p80) {
  if (b_p80 < a_p20) return Difference::Faster;
  if (b_p20 > a_p80) return Difference::Slower;
  const bool b_median_in_a = b_p50 >= a_p20 && b_p50 <= a_p80;
  const bool a_median_in_b = a_p50 >= b_p20 && a_p50 <= b_p80;
  return b_median_in_a && a_median_in_b ? Difference::Same : Difference::Unclear;
}

SweepComparison compare_sweeps(SweepRef a, SweepRef b) {
  SweepComparison out;
  out.a = sweep_summary(a.db, a.id);
  out.b = sweep_summary(b.db, b.id);
  out.device_differences = device_differences(out.a.device, out.b.device);
  out.build_differences = build_differences(out.a.build, out.b.build);
  const std::vector<ProblemBest> best_a = best_per_problem(a.db, a.id);
  const std::vector<ProblemBest> best_b = best_per_problem(b.db, b.id);
  std::map<ShapeKey, const ProblemBest*> by_shape_b;
  for (const ProblemBest& pb : best_b) by_shape_b.emplace(shape_key(pb), &pb);
  std::map<ShapeKey, bool> matched;
  for (const ProblemBest& pa : best_a) {
    const auto it = by_shape_b.find(shape_key(pa));
    const ProblemBest* pb = it == by_shape_b.end() ? nullptr : it->second;
    if (pb) matched[it->first] = true;
    out.problems.push_back(compare_one(&pa, pb));
  }
  for (const ProblemBest& pb : best_b)
    if (!matched.count(shape_key(pb))) out.problems.push_back(compare_one(nullptr, &pb));
  for (const ProblemComparison& c : out.problems)
    ++out.difference_counts[static_cast<std::size_t>(c.difference)];
  return out;
}

}  // namespace gdn::db
