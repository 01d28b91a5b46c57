// A dispatch table loaded at run time (gdn_load_dispatch_table, kernels/src/
// loaded_dispatch_table.cpp): the dispatch.json `gdnlab export` writes reads back as the same
// entries as its header, plan pins included; a bad file is refused with a message naming the
// entry and the field, and the table in force stays. No device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "dispatch.hpp"
#include "gdn/testing/fake_variant.hpp"
#include "gdn_dispatch_table.hpp"  // generated from tests/data/smoke_h200.sqlite
#include "table_dispatch.hpp"

namespace {

namespace dispatch = gdn::dispatch;
namespace generated = gdn::dispatch::generated;
namespace fs = std::filesystem;
using gdn::detail::active_dispatch_table;
using gdn::detail::DispatchTable;
using gdn::detail::parse_dispatch_json;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The exported json beside the generated header (tests/kernels/dispatch/CMakeLists.txt).
const fs::path kSmokeJson = fs::path(GDN_SMOKE_TABLE_DIR) / "dispatch.json";

// Restores the compiled table after each test: the loaded table is process-wide.
struct LoadedTable : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gdn_loaded_table_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override {
    gdn_load_dispatch_table(nullptr);
    fs::remove_all(dir);
  }
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir / name;
    std::ofstream(p) << text;
    return p;
  }
};

// The smoke json with `from` replaced by `to` once (a way to break one field of one entry).
std::string smoke_with(const std::string& from, const std::string& to) {
  std::string text = read(kSmokeJson);
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST_F(LoadedTable, TheExportedJsonReadsAsItsHeader) {
  DispatchTable t;
  std::string error;
  ASSERT_TRUE(parse_dispatch_json(read(kSmokeJson), kSmokeJson.string(), &t, &error)) << error;
  ASSERT_EQ(t.entries.size(), generated::kEntries.size());
  for (std::size_t i = 0; i < t.entries.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(t.entries[i].key, generated::kEntries[i].key);
    EXPECT_EQ(t.entries[i].variant, generated::kEntries[i].variant);
    EXPECT_TRUE(gdn::same_pins(t.entries[i].plan, generated::kEntries[i].plan));
  }
  EXPECT_EQ(t.info->sweep_id, generated::kTableInfo.sweep_id);
  EXPECT_EQ(t.info->device_uuid, generated::kTableInfo.device_uuid);
  EXPECT_EQ(t.origin, kSmokeJson.string());
}

TEST_F(LoadedTable, LoadingReplacesTheTableInForceAndNullRestoresTheBuiltInOne) {
  const std::size_t built_in = gdn::detail::compiled_dispatch_table().entries.size();
  ASSERT_EQ(gdn_load_dispatch_table(kSmokeJson.c_str()), GDN_OK) << gdn_last_error();
  EXPECT_EQ(active_dispatch_table().entries.size(), generated::kEntries.size());
  EXPECT_EQ(active_dispatch_table().origin, kSmokeJson.string());
  ASSERT_EQ(gdn_load_dispatch_table(nullptr), GDN_OK);
  EXPECT_EQ(active_dispatch_table().entries.size(), built_in);
  EXPECT_TRUE(active_dispatch_table().origin.empty());
}

TEST_F(LoadedTable, FormatVersionTwoLoadsWithoutPins) {
  // Format 2 predates plans: an entry's "plan", if any, is not read.
  std::string text = smoke_with("\"format_version\": 3", "\"format_version\": 2");
  const std::string empty_plan = "\"plan\": {}";
  const std::string::size_type plan = text.find(empty_plan);
  ASSERT_NE(plan, std::string::npos);
  text.replace(plan, empty_plan.size(), "\"plan\": {\"prepare_overlap\": 2}");
  DispatchTable t;
  std::string error;
  ASSERT_TRUE(parse_dispatch_json(text, "v2.json", &t, &error)) << error;
  ASSERT_FALSE(t.entries.empty());
  for (const dispatch::Entry& e : t.entries) EXPECT_TRUE(gdn::all_rule(e.plan));
}

TEST_F(LoadedTable, TheCommittedTableLoadsWithItsBackwardEntriesAndPins) {
  const fs::path committed = fs::path(GDN_SOURCE_ROOT) / "kernels/tables/dispatch.json";
  DispatchTable t;
  std::string error;
  ASSERT_TRUE(parse_dispatch_json(read(committed), committed.string(), &t, &error)) << error;
  std::size_t backward = 0, pinned = 0;
  for (const dispatch::Entry& e : t.entries) {
    backward += e.key.pass == dispatch::Pass::Backward;
    pinned += !gdn::all_rule(e.plan);
  }
  EXPECT_GT(backward, 0u) << "the committed table has no backward entry";
  EXPECT_GT(pinned, 0u) << "no entry of the committed table pins a plan field";
}

TEST_F(LoadedTable, PlanPinsOfAnEntryReachTheDecision) {
  const std::string text = smoke_with("\"plan\": {}", "\"plan\": {\"prepare_overlap\": 2, \"fixup_cols\": 16}");
  DispatchTable t;
  std::string error;
  ASSERT_TRUE(parse_dispatch_json(text, "pinned.json", &t, &error)) << error;
  const dispatch::Entry& first = t.entries.front();
  EXPECT_EQ(first.plan.prepare_overlap, 2);
  EXPECT_EQ(first.plan.fixup_cols, 16);
  EXPECT_EQ(first.plan.prepare_heads, GDN_PLAN_RULE);
  // The decision carries the entry's pins, and the call's own pins win field by field.
  const gdn::Variant* real = gdn::find_variant(first.variant);
  ASSERT_NE(real, nullptr) << first.variant;
  gdn::testing::FakeVariant fake(*real);
  const gdn::Variant* pool[] = {&fake};
  dispatch::Shape s;
  s.pass = first.key.pass;
  s.h_qk = first.key.h_qk;
  s.h_v = first.key.h_v;
  s.k = first.key.k;
  s.v = first.key.v;
  s.dtype = first.key.dtype;
  s.num_seqs = dispatch::bucket_floor(first.key.num_seqs_bucket);
  s.total_tokens = dispatch::bucket_floor(first.key.total_tokens_bucket);
  gdn::detail::SelectionInput in;
  in.sm_count = 132;
  const auto d = gdn::detail::decide_variant(t, s, pool, pool, in);
  ASSERT_NE(d.entry, nullptr) << d.source;
  EXPECT_EQ(d.plan.prepare_overlap, 2);
  EXPECT_NE(d.source.find("plan pins +ov2+fx16"), std::string::npos) << d.source;
  EXPECT_NE(d.source.find("loaded from pinned.json"), std::string::npos) << d.source;
  gdn_launch_options call;
  gdn_launch_options_init(&call);
  call.fixup_cols = 32;
  const gdn_launch_options merged = gdn::detail::merge_pins(d.plan, &call);
  EXPECT_EQ(merged.prepare_overlap, 2);
  EXPECT_EQ(merged.fixup_cols, 32);
  EXPECT_TRUE(gdn::same_pins(gdn::detail::merge_pins(d.plan, nullptr), d.plan));
}

TEST_F(LoadedTable, BadFilesAreRefusedByNameAndTheTableInForceStays) {
  ASSERT_EQ(gdn_load_dispatch_table(kSmokeJson.c_str()), GDN_OK) << gdn_last_error();
  struct Case {
    std::string text;
    std::string message;  // part of the error
  };
  const std::vector<Case> cases = {
      {"{ not json", "not JSON"},
      {"[1, 2]", "expected a JSON object, got an array"},
      {smoke_with("gdnlab-dispatch-table", "something-else"), "field 'format': expected \"gdnlab-dispatch-table\""},
      {smoke_with("\"format_version\": 3", "\"format_version\": 9"), "field 'format_version': expected an integer in [2, 3], got the integer 9"},
      {smoke_with("\"pass\": \"fwd\"", "\"pass\": \"sideways\""), "entry 0: field 'pass': expected \"fwd\" or \"bwd\", got \"sideways\""},
      {smoke_with("\"h_qk\": ", "\"h_qk\": -"), "entry 0: field 'h_qk': expected an integer in [1, "},
      {smoke_with("\"variant\": \"", "\"variant\": 7, \"x\": \""), "entry 0: field 'variant': expected a string, got the integer 7"},
      {smoke_with("\"plan\": {}", "\"plan\": {\"consumer_regs\": 232}"), "entry 0: field 'plan': 'consumer_regs' is not a plan field"},
      {smoke_with("\"plan\": {}", "\"plan\": {\"fixup_cols\": 12}"), "entry 0: field 'plan': fixup_cols: expected GDN_PLAN_RULE (-1) or 8, 16 or 32"},
      {smoke_with("\"plan\": {}", "\"plan\": {\"recompute_cp_chunks\": 24}"), "entry 0: field 'plan': recompute_cp_chunks: expected GDN_PLAN_RULE (-1) or 0 (no CP), 16, 32, 64 or 128"},
      {smoke_with("\"plan\": {}", "\"plan\": {\"pass1_beside_recompute\": 2}"), "entry 0: field 'plan': pass1_beside_recompute: expected GDN_PLAN_RULE (-1) or 0 or 1"},
      {smoke_with("\"plan\": {}", "\"plan\": {\"group_sum_beside\": 7}"), "entry 0: field 'plan': group_sum_beside: expected GDN_PLAN_RULE (-1) or 0 or 1"},
      {smoke_with("\"plan\": {}", "\"plan\": {\"prepare_heads\": 7}"), "prepare_heads: expected a divisor of Hv / Hk"},
      {smoke_with("\"entries\": [", "\"entries\": [], \"was\": ["), "field 'entries': the table has no entry"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].message);
    const fs::path p = write("bad" + std::to_string(i) + ".json", cases[i].text);
    EXPECT_EQ(gdn_load_dispatch_table(p.c_str()), GDN_ERROR_INVALID_ARGUMENT);
    const std::string error = gdn_last_error();
    EXPECT_NE(error.find(p.string()), std::string::npos) << error;
    EXPECT_NE(error.find(cases[i].message), std::string::npos) << error;
    EXPECT_NE(error.find("the dispatch table in force is unchanged"), std::string::npos) << error;
    EXPECT_EQ(active_dispatch_table().origin, kSmokeJson.string());
  }
  EXPECT_EQ(gdn_load_dispatch_table((dir / "missing.json").c_str()), GDN_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdn_last_error()).find("cannot open it"), std::string::npos) << gdn_last_error();
  EXPECT_EQ(active_dispatch_table().origin, kSmokeJson.string());
}

}  // namespace
