// The shard partition (tuner/src/shard.cpp) as pure logic: the shards of a sweep are disjoint,
// cover what the unsharded strategy measures, keep each gate in one shard and are balanced.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "gdn/tuner/shard.hpp"

using namespace gdn::tuner;

namespace {

using PairSet = std::set<std::pair<std::size_t, std::size_t>>;

// 6 variants (the last two backward), 9 problems in 3 gate families with growing token counts.
ShardInputs inputs(StrategyKind kind, std::size_t budget = 0) {
  ShardInputs in;
  in.strategy.kind = kind;
  in.strategy.budget = budget;
  in.strategy.seed = 11;
  in.variant_is_backward = {false, false, false, false, true, true};
  for (int p = 0; p < 9; ++p)
    in.problems.push_back({"family" + std::to_string(p % 3), {std::int64_t{4096} << (p % 4), 16, 128, 128, false}});
  return in;
}

// The trials the strategy requests when run with the given shard's filter: a shard's trials
// that it does not own score as failed (as the sweep engine does).
using RungsOf = std::map<std::pair<std::size_t, std::size_t>, std::set<int>>;  // pair -> rungs measured

PairSet measured(const ShardInputs& in, const ShardFilter& f, RungsOf* rungs = nullptr) {
  PairSet out;
  run_strategy(in.strategy, in.variant_is_backward.size(), in.problems.size(), [&](std::span<const Trial> batch) {
    std::vector<TrialScore> scores;
    for (const auto& t : batch) {
      if (!f.owns(t.variant, t.problem)) {
        scores.push_back({false, 0});
        continue;
      }
      out.insert({t.variant, t.problem});
      if (rungs) (*rungs)[{t.variant, t.problem}].insert(t.rung);
      scores.push_back({true, 1.0 + static_cast<double>((t.variant * 5 + t.problem * 3) % 7)});
    }
    return scores;
  });
  return out;
}

void expect_partition(StrategyKind kind, std::size_t budget, int count) {
  SCOPED_TRACE(std::string(strategy_name(kind)) + " in " + std::to_string(count) + " shards");
  const auto in = inputs(kind, budget);
  RungsOf all_rungs, shard_rungs;
  const PairSet all = measured(in, ShardFilter(), &all_rungs);
  PairSet seen;
  std::size_t planned = 0;
  for (int i = 1; i <= count; ++i) {
    const ShardFilter f(in, {i, count});
    const PairSet mine = measured(in, f, &shard_rungs);
    for (const auto& pair : mine) EXPECT_TRUE(seen.insert(pair).second) << "pair measured by two shards";
    planned += f.planned_trials();
    EXPECT_LE(f.cost(), f.max_cost());
  }
  EXPECT_EQ(seen, all);               // the union is the unsharded sweep, nothing lost
  EXPECT_EQ(shard_rungs, all_rungs);  // at the same rungs (halving's races run as unsharded)
  if (kind != StrategyKind::Halving) EXPECT_EQ(planned, all.size());
}

}  // namespace

TEST(Shard, ParsesIOfN) {
  EXPECT_EQ(parse_shard("2/4"), (ShardSpec{2, 4}));
  EXPECT_EQ(parse_shard("1/1"), (ShardSpec{1, 1}));
  EXPECT_FALSE(parse_shard("1/1").sharded());
  EXPECT_EQ(to_string(ShardSpec{3, 8}), "3/8");
  for (const char* bad : {"0/4", "5/4", "4", "a/b", "1/0", "-1/4", "+1/4", "1/4/", " 1/4", "1/5000", "", "/"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--shard: expected I/N", 0), 0u) << what;
      EXPECT_NE(what.find("got '" + std::string(bad) + "'"), std::string::npos) << what;
    }
  }
}

TEST(Shard, LongestFirstPartitionIsDeterministicAndBalanced) {
  const std::vector<double> costs = {5, 1, 4, 4, 2, 3, 3, 1};
  const auto a = partition_by_cost(costs, 3);
  EXPECT_EQ(a, partition_by_cost(costs, 3));
  std::vector<double> load(3, 0);
  for (std::size_t i = 0; i < costs.size(); ++i) load[static_cast<std::size_t>(a[i])] += costs[i];
  EXPECT_EQ(*std::max_element(load.begin(), load.end()), 8);  // 23 over 3: the best possible is 8
  EXPECT_EQ(partition_by_cost(costs, 1), std::vector<int>(costs.size(), 0));
  EXPECT_THROW(partition_by_cost(costs, 0), std::invalid_argument);
}

TEST(Shard, CostGrowsWithWorkAndTheBackwardPass) {
  const PairCostInputs small{1024, 8, 128, 128, false}, large{65536, 32, 128, 128, false};
  EXPECT_LT(expected_pair_cost(small), expected_pair_cost(large));
  PairCostInputs bwd = large;
  bwd.backward = true;
  EXPECT_GT(expected_pair_cost(bwd), expected_pair_cost(large));
  EXPECT_GE(expected_pair_cost({0, 1, 1, 1, false}), 1.0);  // the fixed part of every trial
}

TEST(Shard, ExhaustiveShardsAreDisjointAndCoverEveryPair) {
  for (int n : {1, 2, 3, 4, 7, 64}) expect_partition(StrategyKind::Exhaustive, 0, n);
}

TEST(Shard, RandomShardsSplitTheUnshardedDraw) {
  for (int n : {2, 4, 5}) expect_partition(StrategyKind::Random, 17, n);
}

TEST(Shard, HalvingShardsWholeProblemsAndRunTheSameRaces) {
  for (int n : {2, 3, 4, 12}) expect_partition(StrategyKind::Halving, 0, n);
  expect_partition(StrategyKind::Halving, 4, 3);
  const auto in = inputs(StrategyKind::Halving);
  const ShardFilter f(in, {2, 3});
  for (std::size_t p = 0; p < in.problems.size(); ++p)
    for (std::size_t v = 1; v < in.variant_is_backward.size(); ++v) EXPECT_EQ(f.owns(v, p), f.owns(0, p));
}

TEST(Shard, EachGateFamilyOfAVariantStaysInOneShard) {
  const auto in = inputs(StrategyKind::Exhaustive);
  std::map<std::pair<std::size_t, std::string>, std::set<int>> shards_of;
  for (int i = 1; i <= 4; ++i) {
    const ShardFilter f(in, {i, 4});
    for (std::size_t v = 0; v < in.variant_is_backward.size(); ++v)
      for (std::size_t p = 0; p < in.problems.size(); ++p)
        if (f.owns(v, p)) shards_of[{v, in.problems[p].family}].insert(i);
  }
  for (const auto& [key, shards] : shards_of) EXPECT_EQ(shards.size(), 1u) << key.first << " " << key.second;
}

TEST(Shard, BalancedByExpectedCost) {
  const auto in = inputs(StrategyKind::Exhaustive);
  double total = 0, largest_group = 0;
  for (int i = 1; i <= 3; ++i) total += ShardFilter(in, {i, 3}).cost();
  // A group is one variant's pairs of one family (3 problems), the largest the backward ones.
  for (std::size_t v = 0; v < in.variant_is_backward.size(); ++v)
    for (int fam = 0; fam < 3; ++fam) {
      double g = kGateCost;
      for (std::size_t p = static_cast<std::size_t>(fam); p < in.problems.size(); p += 3) {
        auto c = in.problems[p].cost;
        c.backward = in.variant_is_backward[v];
        g += expected_pair_cost(c);
      }
      largest_group = std::max(largest_group, g);
    }
  const ShardFilter f(in, {1, 3});
  // Longest-first: no shard exceeds the mean by more than the largest group.
  EXPECT_LE(f.max_cost(), total / 3 + largest_group);
  // Stable: the same arguments give the same partition.
  const ShardFilter g(in, {1, 3});
  for (std::size_t v = 0; v < in.variant_is_backward.size(); ++v)
    for (std::size_t p = 0; p < in.problems.size(); ++p) EXPECT_EQ(f.owns(v, p), g.owns(v, p));
}
