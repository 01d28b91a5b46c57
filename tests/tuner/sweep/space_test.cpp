// Space resolution against this build's registry and the generator's full config space.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "gdn/tuner/space.hpp"
#include "gdn/variant.hpp"

using namespace gdn::tuner;

TEST(Space, DefaultIsEveryCompiledVariant) {
  if (gdn::registry().empty()) GTEST_SKIP() << "this build compiled no variant";
  const auto s = resolve_space("default", "");
  ASSERT_EQ(s.size(), gdn::registry().size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_TRUE(s[i].runnable);
    EXPECT_EQ(s[i].record.name, gdn::registry()[i]->name());
  }
}

TEST(Space, AllKeepsInvalidAndUncompiledConfigsWithReasons) {
  if (gdn::full_config_space().empty()) GTEST_SKIP() << "the generator's space is empty in this build";
  const auto s = resolve_space("all", "");
  std::size_t rejected = 0, runnable = 0;
  std::set<std::string> names;
  for (const auto& e : s) {
    EXPECT_TRUE(names.insert(e.record.name).second) << "duplicate " << e.record.name;
    if (e.runnable) {
      ++runnable;
      EXPECT_NE(gdn::find_variant(e.record.name), nullptr) << e.record.name;
    } else {
      ++rejected;
      EXPECT_FALSE(e.reject_reason.empty()) << e.record.name;
    }
  }
  EXPECT_EQ(runnable, gdn::registry().size());
  EXPECT_GT(rejected, 0u);
  // Every invalid config carries check_config's own reason.
  for (const auto& c : gdn::full_config_space()) {
    const auto check = gdn::check_config(c);
    if (check.ok) continue;
    for (const auto& e : s)
      if (e.record.name == gdn::config_name(c)) {
        EXPECT_NE(e.reject_reason.find(check.reason), std::string::npos) << e.reject_reason;
      }
  }
}

TEST(Space, FilesListNamesAndUnknownNamesAreErrorsWithTheLine) {
  const auto path = std::filesystem::temp_directory_path() / "gdnlab_space_test.txt";
  if (gdn::registry().empty()) GTEST_SKIP() << "this build compiled no variant";
  {
    std::ofstream f(path);
    f << "# my space\n\n" << gdn::registry()[0]->name() << "  # the first\n";
  }
  const auto s = resolve_space(path.string(), "");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].record.name, gdn::registry()[0]->name());
  {
    std::ofstream f(path);
    f << gdn::registry()[0]->name() << "\nno_such_variant\n";
  }
  try {
    resolve_space(path.string(), "");
    FAIL() << "accepted an unknown name";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--space"), std::string::npos) << msg;
    EXPECT_NE(msg.find(":2:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no_such_variant"), std::string::npos) << msg;
  }
  std::filesystem::remove(path);
}

TEST(Space, AFilterMatchingNothingIsAnError) {
  try {
    resolve_space("default", "zzz*");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--", 0), 0u) << e.what();
  }
}

TEST(Space, ListingCoversTheWholeSpace) {
  const auto rows = list_space();
  std::size_t compiled = 0;
  for (const auto& r : rows) {
    compiled += r.compiled;
    if (!r.valid) EXPECT_FALSE(r.reason.empty()) << r.name;
  }
  EXPECT_EQ(compiled, gdn::registry().size());
  EXPECT_GE(rows.size(), gdn::full_config_space().size() > 0 ? 1u : 0u);
}

// Plan spaces: each runnable variant times its plan candidates, named by the pins' suffix.
namespace {
gdn::KernelConfig cw64_cp16() {
  gdn::KernelConfig c;
  c.family = gdn::Family::Fused;
  c.roles = gdn::WarpRoles::ColumnWarps;
  c.block_v = 64;
  c.cp_segment_chunks = 16;
  return c;
}
}  // namespace

TEST(Space, PlanAxesPinOneApplicableFieldAtATime) {
  const auto axes = plan_candidates(cw64_cp16(), "axes");
  // The rule, then overlap 3 + first segment 2 + split 2 + heads 8 + fix-up 3.
  ASSERT_EQ(axes.size(), 1u + 3 + 2 + 2 + 8 + 3);
  EXPECT_TRUE(gdn::all_rule(axes[0]));
  std::set<std::string> suffixes;
  for (const auto& pins : axes) {
    int pinned = 0;
    for (const gdn::PlanField& f : gdn::kPlanFields) pinned += pins.*f.member != GDN_PLAN_RULE;
    EXPECT_LE(pinned, 1);
    EXPECT_TRUE(suffixes.insert(gdn::pins_suffix(pins)).second);
  }
  // The staged backward runs a prepare kernel only: heads alone.
  gdn::KernelConfig staged_bwd;
  staged_bwd.pass = gdn::Pass::Backward;
  EXPECT_EQ(plan_candidates(staged_bwd, "axes").size(), 1u + 8);
  EXPECT_EQ(plan_candidates(cw64_cp16(), "rule").size(), 1u);
}

// The chunked backward: heads 8 + fix-up 3 + local heads 8, and without CP its recompute's own
// CP segments 5 (rc0 .. rc128; the fix-up then applies to the recompute's CP).
TEST(Space, PlanAxesOfTheChunkedBackwardSweepTheRecomputesSegmentsWithoutCp) {
  gdn::KernelConfig c;
  c.pass = gdn::Pass::Backward;
  c.family = gdn::Family::Fused;
  c.block_v = 32;
  const auto unsplit = plan_candidates(c, "axes");
  ASSERT_EQ(unsplit.size(), 1u + 8 + 3 + 8 + 5);
  std::set<std::string> suffixes;
  for (const auto& pins : unsplit) suffixes.insert(gdn::pins_suffix(pins));
  for (const char* s : {"+rc0", "+rc16", "+rc32", "+rc64", "+rc128", "+fx16", "+lh2"})
    EXPECT_EQ(suffixes.count(s), 1u) << s;
  c.cp_segment_chunks = 32;
  EXPECT_EQ(plan_candidates(c, "axes").size(), 1u + 8 + 3 + 8);
}

// The wgmma chain with CP (column-warp roles, and the fused kernel, which has no local-gradient
// kernel): its CP pass 1 beside the recompute, on and off (pb0, pb1), joins the axes; without
// CP there is no pass 1 to move.
TEST(Space, PlanAxesOfTheWgmmaChainWithCpSweepItsPass1BesideTheRecompute) {
  gdn::KernelConfig c;
  c.pass = gdn::Pass::Backward;
  c.family = gdn::Family::Fused;
  c.roles = gdn::WarpRoles::ColumnWarps;
  c.block_v = 64;
  c.cp_segment_chunks = 64;
  const auto column_warps = plan_candidates(c, "axes");
  ASSERT_EQ(column_warps.size(), 1u + 8 + 3 + 8 + 2);
  std::set<std::string> suffixes;
  for (const auto& pins : column_warps) suffixes.insert(gdn::pins_suffix(pins));
  for (const char* s : {"+pb0", "+pb1", "+fx16", "+lh2"}) EXPECT_EQ(suffixes.count(s), 1u) << s;
  c.roles = gdn::WarpRoles::ProducerConsumer;
  c.block_v = 128;
  // The fused kernel: its group sum beside it too (gb0, gb1), with CP or without.
  EXPECT_EQ(plan_candidates(c, "axes").size(), 1u + 8 + 3 + 2 + 2);
  c.cp_segment_chunks = 0;
  EXPECT_EQ(plan_candidates(c, "axes").size(), 1u + 8 + 3 + 5 + 2);
  for (const auto& pins : plan_candidates(c, "axes"))
    EXPECT_EQ(pins.pass1_beside_recompute, GDN_PLAN_RULE) << gdn::pins_suffix(pins);
}

TEST(Space, PlanGridCombinesTheApplicableFields) {
  // No CP: overlap and heads apply: (1 + 3) x (1 + 8) combinations with the rule.
  gdn::KernelConfig c = cw64_cp16();
  c.cp_segment_chunks = 0;
  EXPECT_EQ(plan_candidates(c, "grid").size(), 4u * 9u);
}

TEST(Space, PlanSpacesExpandTheResolvedSpaceAndBadNamesAreErrors) {
  if (gdn::registry().empty()) GTEST_SKIP() << "this build compiled no variant";
  const auto rule = resolve_space("default", "");
  const auto axes = resolve_space("default", "", "axes");
  std::size_t expected = 0;
  for (const auto& e : rule) expected += plan_candidates(e.record.config, "axes").size();
  EXPECT_EQ(axes.size(), expected);
  for (const auto& e : axes) {
    EXPECT_EQ(e.record.name, e.record.variant_name() + gdn::pins_suffix(e.record.pins));
    EXPECT_NE(gdn::find_variant(e.record.variant_name()), nullptr) << e.record.name;
  }
  try {
    resolve_space("default", "", "everything");
    FAIL() << "accepted an unknown plan space";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--plans: expected rule, axes or grid, got 'everything'"),
              std::string::npos) << e.what();
  }
  // A space file may name a pinned candidate; a bad suffix names the line.
  const auto path = std::filesystem::temp_directory_path() / "gdnlab_space_plans_test.txt";
  const std::string variant = gdn::registry()[0]->name();
  std::ofstream(path) << variant << "+ph1\n";
  const auto listed = resolve_space(path.string(), "");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].record.pins.prepare_heads, 1);
  std::ofstream(path) << variant << "+ph9\n";
  try {
    resolve_space(path.string(), "");
    FAIL() << "accepted a bad pins suffix";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(":1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("prepare_heads"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

// The backward is a pass of the space like the forward: its configs carry the pass, their
// names are their own.
TEST(Space, ListsBackwardConfigsByTheirOwnNames) {
  bool backward = false;
  for (const auto& l : list_space()) {
    if (l.pass != "bwd") continue;
    backward = true;
    EXPECT_EQ(l.name.rfind("gdn_bwd_", 0), 0u) << l.name;
  }
  EXPECT_TRUE(backward);
}

// The committed tuning spaces (scripts/spaces, swept by scripts/gpu_check.sh): every line a
// candidate of this build, runnable, pins parsed, no duplicates, one pass per file.
TEST(Space, CommittedTuningSpacesResolveToCompiledCandidates) {
  if (gdn::registry().empty()) GTEST_SKIP() << "this build compiled no variant";
  for (const auto& [file, pass] : {std::pair{"anchors_fwd.txt", gdn::Pass::Forward},
                                   std::pair{"anchors_bwd.txt", gdn::Pass::Backward}}) {
    SCOPED_TRACE(file);
    const auto path = std::filesystem::path(GDN_SOURCE_ROOT) / "scripts" / "spaces" / file;
    const auto s = resolve_space(path.string(), "", "rule");
    ASSERT_FALSE(s.empty());
    std::set<std::string> names;
    bool pinned = false;
    for (const auto& e : s) {
      EXPECT_TRUE(names.insert(e.record.name).second) << "duplicate " << e.record.name;
      EXPECT_TRUE(e.runnable) << e.record.name << ": " << e.reject_reason;
      EXPECT_EQ(e.record.pass, pass) << e.record.name;
      EXPECT_NE(gdn::find_variant(e.record.variant_name()), nullptr) << e.record.name << " is not compiled";
      pinned |= e.record.name.find('+') != std::string::npos;
    }
    EXPECT_TRUE(pinned) << "a tuning space pins no launch-plan field";
  }
}
