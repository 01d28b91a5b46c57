// The partition of a sweep into shards (see shard.hpp).
#include "gdn/tuner/shard.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <stdexcept>

namespace gdn::tuner {

namespace {

[[noreturn]] void bad_shard(std::string_view given, const std::string& why = "") {
  throw std::invalid_argument("--shard: expected I/N with whole numbers 1 <= I <= N <= " +
                              std::to_string(kMaxShards) + " (e.g. 2/4), got '" +
                              std::string(given) + "'" + (why.empty() ? "" : " (" + why + ")"));
}

bool parse_int(std::string_view s, int& out) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Work a trial's fixed costs amount to: 8192 tokens x 32 value heads x 128 x 128.
constexpr double kWorkPerTrialOverhead = 8192.0 * 32 * 128 * 128;

}  // namespace

ShardSpec parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) bad_shard(text, "no '/'");
  ShardSpec s;
  if (!parse_int(text.substr(0, slash), s.index) || !parse_int(text.substr(slash + 1), s.count))
    bad_shard(text);
  if (s.count < 1 || s.count > kMaxShards) bad_shard(text, "N out of range");
  if (s.index < 1 || s.index > s.count) bad_shard(text, "I must lie in 1..N");
  return s;
}

std::string to_string(const ShardSpec& s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}

std::vector<int> partition_by_cost(std::span<const double> costs, int count) {
  if (count < 1) throw std::invalid_argument("partition_by_cost: count must be >= 1, got " + std::to_string(count));
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<int> shard(costs.size(), 0);
  for (std::size_t item : order) {
    // min_element returns the first minimum: ties go to the lower shard.
    const auto at = std::min_element(load.begin(), load.end()) - load.begin();
    shard[item] = static_cast<int>(at);
    load[static_cast<std::size_t>(at)] += costs[item];
  }
  return shard;
}

double expected_pair_cost(const PairCostInputs& p) {
  const double work = static_cast<double>(p.total_tokens) * p.h_v * p.k * p.v * (p.backward ? 2.5 : 1.0);
  return 1.0 + work / kWorkPerTrialOverhead;
}

ShardFilter::ShardFilter(const ShardInputs& in, const ShardSpec& spec) : spec_(spec) {
  const std::size_t nv = in.variant_is_backward.size(), np = in.problems.size();
  auto pair_cost = [&](std::size_t v, std::size_t p) {
    auto c = in.problems[p].cost;
    c.backward = in.variant_is_backward[v];
    return expected_pair_cost(c);
  };
  const int me = spec.index - 1;
  if (in.strategy.kind == StrategyKind::Halving) {
    // Whole problems, costed by what the race measures on them (every rung, every variant).
    by_problem_ = true;
    const std::size_t per_problem = tuner::planned_trials(in.strategy, nv, 1);
    std::vector<double> costs(np, 0.0);
    for (std::size_t p = 0; p < np; ++p) {
      double all_variants = 0;
      for (std::size_t v = 0; v < nv; ++v) all_variants += pair_cost(v, p);
      costs[p] = nv ? all_variants / static_cast<double>(nv) * static_cast<double>(per_problem) : 0;
    }
    const auto shard = partition_by_cost(costs, spec.count);
    std::vector<double> load(static_cast<std::size_t>(spec.count), 0.0);
    for (std::size_t p = 0; p < np; ++p) {
      load[static_cast<std::size_t>(shard[p])] += costs[p];
      if (shard[p] == me) problems_.insert(p);
    }
    planned_ = per_problem * problems_.size();
    cost_ = load[static_cast<std::size_t>(me)];
    max_cost_ = *std::max_element(load.begin(), load.end());
    return;
  }
  // Exhaustive and random: the trials the strategy requests do not depend on any measurement
  // (one batch), so they are listed by running it with a measure that records them.
  std::vector<Trial> trials;
  run_strategy(in.strategy, nv, np, [&](std::span<const Trial> batch) {
    trials.insert(trials.end(), batch.begin(), batch.end());
    return std::vector<TrialScore>(batch.size());
  });
  // Group by (variant, gate family): one gate per group, in one shard.
  std::map<std::pair<std::size_t, std::string>, std::size_t> group_of;
  std::vector<double> costs;
  std::vector<std::size_t> trial_group(trials.size());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const auto key = std::make_pair(trials[i].variant, in.problems[trials[i].problem].family);
    auto [it, fresh] = group_of.emplace(key, costs.size());
    if (fresh) costs.push_back(kGateCost);
    trial_group[i] = it->second;
    costs[it->second] += pair_cost(trials[i].variant, trials[i].problem);
  }
  const auto shard = partition_by_cost(costs, spec.count);
  std::vector<double> load(static_cast<std::size_t>(spec.count), 0.0);
  for (std::size_t g = 0; g < costs.size(); ++g) load[static_cast<std::size_t>(shard[g])] += costs[g];
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (shard[trial_group[i]] == me) pairs_.insert({trials[i].variant, trials[i].problem});
  planned_ = pairs_.size();
  cost_ = load[static_cast<std::size_t>(me)];
  max_cost_ = load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

bool ShardFilter::owns(std::size_t variant, std::size_t problem) const {
  if (!spec_.sharded()) return true;
  return by_problem_ ? problems_.count(problem) != 0 : pairs_.count({variant, problem}) != 0;
}

}  // namespace gdn::tuner
