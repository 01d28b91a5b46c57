// Search strategies as pure logic over an abstract "measure a batch" function, so they are
// unit-testable without a GPU, a worker or a database. A strategy decides WHICH
// (variant, problem) pairs are measured and at WHICH fidelity; the runner decides how.
//
// Determinism: every choice depends only on (options, sizes, seed, measured values). A sweep
// resumed after a crash replays the same decisions because already-committed trials are
// answered from the database with the values recorded the first time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gdn::tuner {

enum class StrategyKind { Exhaustive, Random, Halving };

// "exhaustive" | "random" | "halving"; throws std::invalid_argument naming the value.
StrategyKind parse_strategy(std::string_view name);
std::string_view strategy_name(StrategyKind k);

struct StrategyOptions {
  StrategyKind kind = StrategyKind::Exhaustive;
  // random: number of (variant, problem) pairs to measure (> 0).
  // halving: variants drawn per problem for the first rung (0 = all of them).
  std::size_t budget = 0;
  std::uint64_t seed = 0;
  int halving_eta = 3;  // keep the best 1/eta of each rung
};

// One measurement request. `rung` is the fidelity: the final (precise) measurement has
// rung == kPreciseRung; successive halving's cheap rungs are 0, 1, 2, ... and each rung
// takes more samples than the one before (the runner maps rung -> protocol).
inline constexpr int kPreciseRung = -1;
struct Trial {
  std::size_t variant = 0;  // index into the sweep's variant list
  std::size_t problem = 0;  // index into the sweep's problem list
  int rung = kPreciseRung;
  friend bool operator==(const Trial&, const Trial&) = default;
};

// What a strategy needs to know about a finished trial.
struct TrialScore {
  bool passed = false;  // measured and correct; anything else never survives a rung
  double p50_ms = 0;
};

using MeasureBatch = std::function<std::vector<TrialScore>(std::span<const Trial>)>;

// Runs the strategy to completion. Each call of `measure` gets a batch whose trials are
// independent (the runner may spread them over several GPUs) and must return one score per
// trial, in order. Throws std::invalid_argument for inconsistent options.
void run_strategy(const StrategyOptions& opt, std::size_t num_variants, std::size_t num_problems,
                  const MeasureBatch& measure);

// The total number of trials a strategy will request at most (progress line, ETA).
std::size_t planned_trials(const StrategyOptions& opt, std::size_t num_variants,
                           std::size_t num_problems);

// A seeded generator whose output is the same on every platform and standard library
// (std::shuffle and std::uniform_int_distribution are implementation-defined).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t state_;
};

// The first k elements of a seeded Fisher-Yates permutation of [0, n), in draw order.
std::vector<std::size_t> sample_without_replacement(std::size_t n, std::size_t k,
                                                    std::uint64_t seed);

}  // namespace gdn::tuner
