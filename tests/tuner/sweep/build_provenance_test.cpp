// gdnlab knows the commit its build was made from (what a GPU sweep records): read at build
// time, so a build tree configured at an older commit and rebuilt at a newer one names the newer.
#include <gtest/gtest.h>

#include "sweep_test_util.hpp"

using namespace gdn::tuner::testing;

namespace {
std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}
}  // namespace

TEST(BuildProvenance, VersionNamesTheCommitTheBuildWasMadeFrom) {
  std::string head;
  if (run_command("git -C " GDN_SOURCE_ROOT " rev-parse --short=12 HEAD 2>/dev/null", head) != 0)
    GTEST_SKIP() << "the sources are not a git checkout";
  head = trimmed(head);
  std::string out;
  ASSERT_EQ(run_command(gdnlab() + " --version", out), 0) << out;
  // What a GPU sweep records as its build (tuner::this_build), here without a GPU.
  EXPECT_TRUE(out.find("(git " + head + ",") != std::string::npos ||
              out.find("(git " + head + "-dirty,") != std::string::npos)
      << out << "HEAD is " << head;
}
