// gdn::config_name: the examples of the contract, and no two configs share a name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gdn/variant_config.hpp"

namespace {

using gdn::Family;
using gdn::Pass;
using gdn::KernelConfig;
using gdn::WarpRoles;

TEST(ConfigName, MatchesTheDocumentedExamples) {
  KernelConfig staged;
  staged.block_v = 64;
  EXPECT_EQ(gdn::config_name(staged), "gdn_fwd_sm90_staged_v64_cp0");
  // The config carries the pass: a backward variant's name is its own, not a patched one.
  staged.pass = Pass::Backward;
  EXPECT_EQ(gdn::config_name(staged), "gdn_bwd_sm90_staged_v64_cp0");

  KernelConfig fused;
  fused.family = Family::Fused;
  fused.block_v = 64;
  fused.stages = 2;
  fused.roles = WarpRoles::ProducerConsumer;
  fused.cp_segment_chunks = 16;
  EXPECT_EQ(gdn::config_name(fused), "gdn_fwd_sm90_fused_v64_s2_pc_cp16");

  fused.roles = WarpRoles::Cooperative;
  fused.stages = 3;
  EXPECT_EQ(gdn::config_name(fused), "gdn_fwd_sm90_fused_v64_s3_coop_cp16");

  fused.roles = WarpRoles::ColumnWarps;
  fused.stages = 2;
  fused.cp_segment_chunks = 0;
  EXPECT_EQ(gdn::config_name(fused), "gdn_fwd_sm90_fused_v64_s2_cw_cp0");

  staged.pass = Pass::Forward;
  staged.roles = WarpRoles::ColumnWarps;  // invalid, but named apart from the valid one
  EXPECT_EQ(gdn::config_name(staged), "gdn_fwd_sm90_staged_v64_cw_cp0");
}

TEST(ConfigName, IsUniqueOverTheWholeGrid) {
  std::set<std::string> names;
  int configs = 0;
  for (Pass pass : {Pass::Forward, Pass::Backward})
    for (Family family : {Family::Staged, Family::Fused})
      for (int block_v : {32, 64, 128})
        for (int stages : {2, 3})
          for (WarpRoles roles :
               {WarpRoles::Cooperative, WarpRoles::ProducerConsumer, WarpRoles::ColumnWarps})
            for (int cp : {0, 4, 16, 256}) {
              KernelConfig c{pass, family, block_v, stages, roles, cp};
              ++configs;
              EXPECT_TRUE(names.insert(gdn::config_name(c)).second) << gdn::config_name(c);
            }
  EXPECT_EQ(static_cast<int>(names.size()), configs);
}

}  // namespace
