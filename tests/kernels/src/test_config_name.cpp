// gdn::config_name: the examples of the contract, and no two configs share a name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gdn/variant_config.hpp"

namespace {

using gdn::Family;
using gdn::KernelConfig;
using gdn::WarpRoles;

TEST(ConfigName, MatchesTheDocumentedExamples) {
  KernelConfig staged;
  staged.block_v = 64;
  EXPECT_EQ(gdn::config_name(staged), "gdn_fwd_sm90_staged_v64_cp0");

  KernelConfig fused;
  fused.family = Family::Fused;
  fused.block_v = 64;
  fused.stages = 2;
  fused.roles = WarpRoles::ProducerConsumer;
  fused.consumer_regs = 232;
  fused.cp_segment_chunks = 16;
  fused.chains_per_cta = 2;
  EXPECT_EQ(gdn::config_name(fused), "gdn_fwd_sm90_fused_v64_s2_pc_r232_cp16_x2");

  fused.roles = WarpRoles::Cooperative;
  fused.consumer_regs = 0;
  fused.chains_per_cta = 1;
  fused.stages = 3;
  EXPECT_EQ(gdn::config_name(fused), "gdn_fwd_sm90_fused_v64_s3_coop_cp16");

  fused.roles = WarpRoles::ColumnWarps;
  fused.stages = 2;
  fused.cp_segment_chunks = 0;
  EXPECT_EQ(gdn::config_name(fused), "gdn_fwd_sm90_fused_v64_s2_cw_cp0");

  staged.roles = WarpRoles::ColumnWarps;  // invalid, but named apart from the valid one
  EXPECT_EQ(gdn::config_name(staged), "gdn_fwd_sm90_staged_v64_cw_cp0");
}

TEST(ConfigName, IsUniqueOverTheWholeGrid) {
  std::set<std::string> names;
  int configs = 0;
  for (Family family : {Family::Staged, Family::Fused})
    for (int block_v : {32, 64, 128})
      for (int stages : {2, 3})
        for (WarpRoles roles :
             {WarpRoles::Cooperative, WarpRoles::ProducerConsumer, WarpRoles::ColumnWarps})
          for (int regs : {0, 232, 240})
            for (int cp : {0, 4, 16, 256})
              for (int chains : {1, 2}) {
                KernelConfig c{family, block_v, stages, roles, regs, cp, chains};
                ++configs;
                EXPECT_TRUE(names.insert(gdn::config_name(c)).second) << gdn::config_name(c);
              }
  EXPECT_EQ(static_cast<int>(names.size()), configs);
}

}  // namespace
