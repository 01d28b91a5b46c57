// Strategies as pure logic over a fake measure function.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>

#include "gdn/tuner/strategy.hpp"

using namespace gdn::tuner;

namespace {

// Latency model: variant v on problem p takes 1 + ((v * 7 + p * 3) % nv) ms; variants in
// `failing` never pass. Records every trial requested.
struct FakeMeasure {
  std::size_t nv;
  std::set<std::size_t> failing;
  std::vector<Trial> log;
  std::vector<std::size_t> batch_sizes;
  double ms(std::size_t v, std::size_t p) const { return 1.0 + static_cast<double>((v * 7 + p * 3) % nv); }
  MeasureBatch fn() {
    return [this](std::span<const Trial> batch) {
      batch_sizes.push_back(batch.size());
      std::vector<TrialScore> s;
      for (const auto& t : batch) {
        log.push_back(t);
        s.push_back({!failing.count(t.variant), ms(t.variant, t.problem)});
      }
      return s;
    };
  }
};

}  // namespace

TEST(Strategy, ExhaustiveMeasuresEveryPairOncePrecisely) {
  FakeMeasure m{5, {}, {}, {}};
  run_strategy({StrategyKind::Exhaustive, 0, 0, 3}, 5, 3, m.fn());
  ASSERT_EQ(m.log.size(), 15u);
  std::set<std::pair<std::size_t, std::size_t>> pairs;
  for (const auto& t : m.log) {
    EXPECT_EQ(t.rung, kPreciseRung);
    pairs.insert({t.variant, t.problem});
  }
  EXPECT_EQ(pairs.size(), 15u);
  EXPECT_EQ(planned_trials({StrategyKind::Exhaustive, 0, 0, 3}, 5, 3), 15u);
}

TEST(Strategy, RandomDrawsBudgetDistinctPairsDeterministically) {
  FakeMeasure a{10, {}, {}, {}}, b{10, {}, {}, {}}, c{10, {}, {}, {}};
  run_strategy({StrategyKind::Random, 17, 42, 3}, 10, 4, a.fn());
  run_strategy({StrategyKind::Random, 17, 42, 3}, 10, 4, b.fn());
  run_strategy({StrategyKind::Random, 17, 43, 3}, 10, 4, c.fn());
  ASSERT_EQ(a.log.size(), 17u);
  EXPECT_EQ(a.log, b.log);  // same seed, same trials, same order
  EXPECT_NE(a.log, c.log);  // another seed draws another sample
  std::set<std::pair<std::size_t, std::size_t>> pairs;
  for (const auto& t : a.log) pairs.insert({t.variant, t.problem});
  EXPECT_EQ(pairs.size(), 17u);
}

TEST(Strategy, RandomBudgetLargerThanSpaceMeasuresEverything) {
  FakeMeasure m{3, {}, {}, {}};
  run_strategy({StrategyKind::Random, 100, 1, 3}, 3, 2, m.fn());
  EXPECT_EQ(m.log.size(), 6u);
}

TEST(Strategy, HalvingKeepsTheFastestAndMeasuresOnlySurvivorsPrecisely) {
  const std::size_t nv = 27, np = 2;
  FakeMeasure m{nv, {}, {}, {}};
  run_strategy({StrategyKind::Halving, 0, 7, 3}, nv, np, m.fn());
  // Rungs: 27 -> 9 -> 3, then 3 precise per problem.
  EXPECT_EQ(m.batch_sizes, (std::vector<std::size_t>{54, 18, 6}));
  for (std::size_t p = 0; p < np; ++p) {
    std::vector<std::size_t> precise;
    for (const auto& t : m.log)
      if (t.problem == p && t.rung == kPreciseRung) precise.push_back(t.variant);
    ASSERT_EQ(precise.size(), 3u);
    // The three fastest of the latency model survive.
    std::multimap<double, std::size_t> by_ms;
    for (std::size_t v = 0; v < nv; ++v) by_ms.emplace(m.ms(v, p), v);
    std::set<std::size_t> best3;
    for (auto it = by_ms.begin(); best3.size() < 3; ++it) best3.insert(it->second);
    EXPECT_EQ(std::set<std::size_t>(precise.begin(), precise.end()), best3);
  }
  EXPECT_LE(m.log.size(), planned_trials({StrategyKind::Halving, 0, 7, 3}, nv, np));
}

TEST(Strategy, HalvingNeverPromotesAFailure) {
  const std::size_t nv = 9;
  FakeMeasure m{nv, {}, {}, {}};
  // Make the fastest variants of problem 0 fail: they must not reach the precise rung.
  for (std::size_t v = 0; v < nv; ++v)
    if (m.ms(v, 0) <= 3.0) m.failing.insert(v);
  run_strategy({StrategyKind::Halving, 0, 1, 3}, nv, 1, m.fn());
  for (const auto& t : m.log)
    if (t.rung == kPreciseRung) EXPECT_FALSE(m.failing.count(t.variant)) << t.variant;
}

TEST(Strategy, HalvingBudgetDrawsASeededSubsetPerProblem) {
  FakeMeasure a{20, {}, {}, {}}, b{20, {}, {}, {}};
  run_strategy({StrategyKind::Halving, 8, 5, 2}, 20, 3, a.fn());
  run_strategy({StrategyKind::Halving, 8, 5, 2}, 20, 3, b.fn());
  EXPECT_EQ(a.log, b.log);
  std::size_t rung0 = 0;
  for (const auto& t : a.log) rung0 += t.rung == 0;
  EXPECT_EQ(rung0, 8u * 3u);
}

TEST(Strategy, InconsistentOptionsAreRejectedWithTheOptionName) {
  FakeMeasure m{3, {}, {}, {}};
  try {
    run_strategy({StrategyKind::Random, 0, 1, 3}, 3, 1, m.fn());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--budget"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_strategy({StrategyKind::Exhaustive, 4, 1, 3}, 3, 1, m.fn()), std::invalid_argument);
  EXPECT_THROW(parse_strategy("greedy"), std::invalid_argument);
  EXPECT_TRUE(m.log.empty());
}

TEST(Strategy, SeededSamplingIsAPermutationPrefix) {
  const auto s = sample_without_replacement(50, 50, 9);
  EXPECT_EQ(std::set<std::size_t>(s.begin(), s.end()).size(), 50u);
  EXPECT_EQ(sample_without_replacement(50, 10, 9), std::vector<std::size_t>(s.begin(), s.begin() + 10));
  // Fixed values: the generator must not depend on the standard library.
  SplitMix64 r(0);
  EXPECT_EQ(r.next(), 0xE220A8397B1DCDAFull);
}
