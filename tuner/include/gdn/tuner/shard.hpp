// Sharded sweeps: `gdnlab sweep --shard I/N` runs part I of N of a sweep, each part an ordinary
// resumable sweep in its own database, merged afterwards with `gdnlab merge`. The partition is
// a pure function of the sweep's arguments (its variants, problems and strategy), so every
// shard of one sweep computes the same partition on its own, and a resumed or requeued shard
// measures exactly the pairs it measured before.
//
// What is partitioned depends on the strategy:
//   exhaustive, random  the (variant, problem) pairs the strategy measures (random's draw is
//                       made over the whole grid first, so the union of the shards is the
//                       unsharded draw), grouped by (variant, gate family) so each correctness
//                       gate runs in one shard only, balanced by expected cost;
//   halving             whole problems: each problem's race depends on the measurements of
//                       its own variants only, so a shard that owns a problem runs the same
//                       race as the unsharded sweep.
// Variants that cannot run at all (recorded once, CompileRejected) are recorded by shard 1.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gdn/tuner/strategy.hpp"

namespace gdn::tuner {

struct ShardSpec {
  int index = 1;  // 1-based: shard I of N
  int count = 1;  // 1: the sweep is not sharded
  bool sharded() const { return count > 1; }
  friend bool operator==(const ShardSpec&, const ShardSpec&) = default;
};

// "I/N" with whole numbers 1 <= I <= N <= kMaxShards; throws std::invalid_argument naming
// --shard, what is expected and what was given.
inline constexpr int kMaxShards = 4096;
ShardSpec parse_shard(std::string_view text);
std::string to_string(const ShardSpec& s);  // "2/4"

// Longest-processing-time-first partition: items in decreasing cost (ties by index) each go to
// the shard with the least cost so far (ties by the lower shard). Deterministic, and within
// 4/3 of the best possible makespan. Returns the 0-based shard of every item.
std::vector<int> partition_by_cost(std::span<const double> costs, int count);

// What one (variant, problem) pair is expected to cost, relative to other pairs (only ratios
// matter): a fixed part per trial (worker round trip, warm-up, profiler replay passes) and a
// part that grows with the work of the problem (tokens x value heads x K x V; the backward
// pass does about 2.5 times the forward's). kGateCost is one correctness gate (float64 CPU
// reference on kGateSeqlens), paid once per (variant, gate family).
struct PairCostInputs {
  std::int64_t total_tokens = 0;
  int h_v = 0;
  int k = 0;
  int v = 0;
  bool backward = false;
};
double expected_pair_cost(const PairCostInputs& p);
inline constexpr double kGateCost = 8.0;

// The sweep as the partition sees it: the strategy's variant axis (runnable variants) and the
// problems, with what the cost model and the gate grouping need.
struct ShardProblem {
  std::string family;        // gate family (family_key): pairs of one variant and family stay together
  PairCostInputs cost;
};
struct ShardInputs {
  StrategyOptions strategy;
  std::vector<bool> variant_is_backward;  // per runnable variant
  std::vector<ShardProblem> problems;
};

// Which trials of the strategy belong to this shard.
class ShardFilter {
 public:
  ShardFilter() = default;  // unsharded: owns everything
  ShardFilter(const ShardInputs& inputs, const ShardSpec& spec);

  const ShardSpec& spec() const { return spec_; }
  bool owns(std::size_t variant, std::size_t problem) const;
  // Variants that cannot run at all are recorded by shard 1 only.
  bool records_rejected() const { return spec_.index == 1; }
  // Trials this shard will request at most (the progress line's total).
  std::size_t planned_trials() const { return planned_; }
  // Expected cost of this shard and of the heaviest one (the balance, for messages and tests).
  double cost() const { return cost_; }
  double max_cost() const { return max_cost_; }

 private:
  ShardSpec spec_;
  bool by_problem_ = false;
  std::set<std::size_t> problems_;                           // halving: owned problems
  std::set<std::pair<std::size_t, std::size_t>> pairs_;      // otherwise: owned (variant, problem)
  std::size_t planned_ = 0;
  double cost_ = 0;
  double max_cost_ = 0;
};

}  // namespace gdn::tuner
