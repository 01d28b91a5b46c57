// The progress line's text (the live redraw itself goes to a terminal).
#include <gtest/gtest.h>

#include <cstdio>

#include "gdn/tuner/progress.hpp"

using gdn::tuner::ProgressLine;

TEST(Progress, RendersCountsRateEtaAndBest) {
  const auto line = ProgressLine::render(12, 40, 2.0, "smoke#2: v 0.1 ms");
  EXPECT_NE(line.find("12/40"), std::string::npos) << line;
  EXPECT_NE(line.find("30%"), std::string::npos) << line;
  EXPECT_NE(line.find("2.0/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 14s"), std::string::npos) << line;
  EXPECT_NE(line.find("best smoke#2: v 0.1 ms"), std::string::npos) << line;
  EXPECT_NE(ProgressLine::render(0, 10, 0, "").find("ETA ?"), std::string::npos);
}

TEST(Progress, Durations) {
  EXPECT_EQ(ProgressLine::format_duration(9.4), "9s");
  EXPECT_EQ(ProgressLine::format_duration(245), "4m05s");
  EXPECT_EQ(ProgressLine::format_duration(7380), "2h03m");
}

TEST(Progress, BestSoFarFollowsTheCurrentProblem) {
  char buf[4096] = {};
  FILE* f = fmemopen(buf, sizeof buf, "w");
  ProgressLine p(3, true, f);
  p.note_best("a", "v1", 2.0);
  p.note_best("a", "v2", 1.0);
  p.note_best("a", "v3", 3.0);  // slower: not the best
  p.advance(true);
  p.finish();
  std::fclose(f);
  const std::string out = buf;
  EXPECT_NE(out.find("a: v2 1 ms"), std::string::npos) << out;
  EXPECT_EQ(out.find("v3"), std::string::npos) << out;
}
