#include <gtest/gtest.h>

#include <vector>

#include "gdn/profiler/pm_sampling.hpp"

namespace gp = gdn::profiler;
using Span = gp::SampleSpan;

TEST(PmTrim, DropsTheLongStartupSample) {
  const std::uint64_t us100 = 100000;
  const std::vector<Span> spans{{0, 2'000'000'000}, {2'000'000'000, 2'000'100'000}, {2'000'100'000, 2'000'200'000}};
  EXPECT_EQ(gp::count_startup_samples(spans, us100), 1u);
}

TEST(PmTrim, KeepsRegularTimelinesWhole) {
  const std::vector<Span> spans{{0, 100000}, {100000, 210000}, {210000, 300000}};
  EXPECT_EQ(gp::count_startup_samples(spans, 100000), 0u);
}

TEST(PmTrim, DropsZeroLengthAndSeveralLongLeadingSamples) {
  const std::vector<Span> spans{{5, 5}, {5, 900000}, {900000, 1000000}, {1000000, 5000000}};
  // Only leading ones go: the long sample after a regular one stays (it is data).
  EXPECT_EQ(gp::count_startup_samples(spans, 100000), 2u);
}

TEST(PmTrim, ToleratesJitterUpTo150Percent) {
  EXPECT_EQ(gp::count_startup_samples(std::vector<Span>{{0, 150000}}, 100000), 0u);
  EXPECT_EQ(gp::count_startup_samples(std::vector<Span>{{0, 150001}}, 100000), 1u);
}

TEST(PmTrim, AllIrregularOrEmpty) {
  EXPECT_EQ(gp::count_startup_samples(std::vector<Span>{}, 100000), 0u);
  EXPECT_EQ(gp::count_startup_samples(std::vector<Span>{{0, 10'000'000}}, 100000), 1u);
}

TEST(PmOptionsValidation, NamesTheField) {
  gp::PmOptions o;
  EXPECT_NO_THROW(gp::validate(o));
  o.interval_ns = 10;
  try {
    gp::validate(o);
    FAIL() << "interval 10 ns accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PmOptions.interval_ns"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got 10"), std::string::npos) << e.what();
  }
  o = {};
  o.calls = 0;
  EXPECT_THROW(gp::validate(o), std::invalid_argument);
  o = {};
  o.max_samples = 0;
  EXPECT_THROW(gp::validate(o), std::invalid_argument);
}
