// Exhaustive, random and successive-halving strategies (see strategy.hpp).
#include "gdn/tuner/strategy.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace gdn::tuner {

StrategyKind parse_strategy(std::string_view name) {
  if (name == "exhaustive") return StrategyKind::Exhaustive;
  if (name == "random") return StrategyKind::Random;
  if (name == "halving") return StrategyKind::Halving;
  throw std::invalid_argument("--strategy: expected exhaustive, random or halving, got '" +
                              std::string(name) + "'");
}

std::string_view strategy_name(StrategyKind k) {
  switch (k) {
    case StrategyKind::Exhaustive: return "exhaustive";
    case StrategyKind::Random: return "random";
    case StrategyKind::Halving: return "halving";
  }
  return "?";
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t n) {
  // Rejection sampling: discard the top partial block so every residue is equally likely.
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return x % n;
}

std::vector<std::size_t> sample_without_replacement(std::size_t n, std::size_t k,
                                                    std::uint64_t seed) {
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  k = std::min(k, n);
  SplitMix64 rng(seed);
  for (std::size_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + rng.below(n - i)]);
  idx.resize(k);
  return idx;
}

namespace {

void check_options(const StrategyOptions& opt) {
  if (opt.kind == StrategyKind::Random && opt.budget == 0)
    throw std::invalid_argument("--budget: the random strategy needs a budget > 0 (pairs to measure)");
  if (opt.kind == StrategyKind::Exhaustive && opt.budget != 0)
    throw std::invalid_argument("--budget: the exhaustive strategy measures every pair; got a budget of " +
                                std::to_string(opt.budget) + " (use --strategy random or halving)");
  if (opt.halving_eta < 2)
    throw std::invalid_argument("halving eta must be >= 2, got " + std::to_string(opt.halving_eta));
}

void measure_checked(const MeasureBatch& measure, const std::vector<Trial>& batch,
                     std::vector<TrialScore>& scores) {
  scores = measure(batch);
  if (scores.size() != batch.size())
    throw std::logic_error("measure returned " + std::to_string(scores.size()) + " scores for " +
                           std::to_string(batch.size()) + " trials");
}

void run_exhaustive(std::size_t nv, std::size_t np, const MeasureBatch& measure) {
  std::vector<Trial> batch;
  batch.reserve(nv * np);
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t v = 0; v < nv; ++v) batch.push_back({v, p, kPreciseRung});
  std::vector<TrialScore> scores;
  if (!batch.empty()) measure_checked(measure, batch, scores);
}

void run_random(const StrategyOptions& opt, std::size_t nv, std::size_t np,
                const MeasureBatch& measure) {
  // Draw pairs from the flattened (problem, variant) grid, then measure them grouped by
  // problem so that consecutive trials share inputs (cheaper for the worker).
  auto picks = sample_without_replacement(nv * np, opt.budget, opt.seed);
  std::sort(picks.begin(), picks.end());
  std::vector<Trial> batch;
  for (std::size_t flat : picks) batch.push_back({flat % nv, flat / nv, kPreciseRung});
  std::vector<TrialScore> scores;
  if (!batch.empty()) measure_checked(measure, batch, scores);
}

// Size of the next rung: the best 1/eta, rounded up so at least one survives.
std::size_t keep_count(std::size_t n, int eta) { return (n + eta - 1) / eta; }

void run_halving(const StrategyOptions& opt, std::size_t nv, std::size_t np,
                 const MeasureBatch& measure) {
  const auto eta = static_cast<std::size_t>(opt.halving_eta);
  // Per problem: the variants still in the race. Each problem draws its own subset with a
  // seed derived from (seed, problem) so adding problems does not reshuffle the others.
  std::vector<std::vector<std::size_t>> alive(np);
  for (std::size_t p = 0; p < np; ++p) {
    const std::size_t k = opt.budget == 0 ? nv : std::min(opt.budget, nv);
    alive[p] = sample_without_replacement(nv, k, opt.seed ^ (0xA24BAED4963EE407ull * (p + 1)));
    std::sort(alive[p].begin(), alive[p].end());
  }
  for (int rung = 0;; ++rung) {
    std::vector<Trial> batch;
    for (std::size_t p = 0; p < np; ++p)
      if (alive[p].size() > eta)
        for (std::size_t v : alive[p]) batch.push_back({v, p, rung});
    if (batch.empty()) break;
    std::vector<TrialScore> scores;
    measure_checked(measure, batch, scores);
    std::size_t at = 0;
    for (std::size_t p = 0; p < np; ++p) {
      if (alive[p].size() <= eta) continue;
      struct Ranked { double ms; std::size_t v; };
      std::vector<Ranked> ranked;
      const std::size_t n = alive[p].size();
      for (std::size_t i = 0; i < n; ++i, ++at)
        if (scores[at].passed) ranked.push_back({scores[at].p50_ms, alive[p][i]});
      // Ties broken by variant index so the order never depends on the sort algorithm.
      std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        return a.ms != b.ms ? a.ms < b.ms : a.v < b.v;
      });
      ranked.resize(std::min(ranked.size(), keep_count(n, opt.halving_eta)));
      alive[p].clear();
      for (const auto& r : ranked) alive[p].push_back(r.v);
      std::sort(alive[p].begin(), alive[p].end());
    }
  }
  std::vector<Trial> final_batch;
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t v : alive[p]) final_batch.push_back({v, p, kPreciseRung});
  std::vector<TrialScore> scores;
  if (!final_batch.empty()) measure_checked(measure, final_batch, scores);
}

}  // namespace

void run_strategy(const StrategyOptions& opt, std::size_t nv, std::size_t np,
                  const MeasureBatch& measure) {
  check_options(opt);
  switch (opt.kind) {
    case StrategyKind::Exhaustive: return run_exhaustive(nv, np, measure);
    case StrategyKind::Random: return run_random(opt, nv, np, measure);
    case StrategyKind::Halving: return run_halving(opt, nv, np, measure);
  }
}

std::size_t planned_trials(const StrategyOptions& opt, std::size_t nv, std::size_t np) {
  switch (opt.kind) {
    case StrategyKind::Exhaustive: return nv * np;
    case StrategyKind::Random: return std::min(opt.budget, nv * np);
    case StrategyKind::Halving: {
      // Upper bound: every trial passes, so each rung keeps exactly ceil(n / eta).
      std::size_t n = opt.budget == 0 ? nv : std::min(opt.budget, nv), per_problem = 0;
      const auto eta = static_cast<std::size_t>(std::max(opt.halving_eta, 2));
      while (n > eta) {
        per_problem += n;
        n = keep_count(n, static_cast<int>(eta));
      }
      return (per_problem + n) * np;
    }
  }
  return 0;
}

}  // namespace gdn::tuner
