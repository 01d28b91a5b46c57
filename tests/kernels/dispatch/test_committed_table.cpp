// The dispatch table compiled into this build (by default the committed H200 table in
// kernels/tables/) only helps if the variants it names are registered: a table entry whose
// variant is missing silently falls back to the default rule. Runs without a device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gdn/launch_plan.hpp"
#include "gdn/variant.hpp"
#include "table_dispatch.hpp"

TEST(CommittedTable, EveryVariantItNamesIsRegistered) {
  const gdn::detail::DispatchTable table = gdn::detail::compiled_dispatch_table();
  if (table.entries.empty()) GTEST_SKIP() << "this build has no dispatch table (GDN_DISPATCH_TABLE=none)";
  for (const gdn::dispatch::Entry& e : table.entries) {
    const std::string name(e.variant);
    const gdn::Variant* v = gdn::find_variant(name);
    ASSERT_NE(v, nullptr) << name << " is named by the table but not registered";
    EXPECT_EQ(v->pass(), e.key.pass) << name;
  }
}

// The compiled table, when it is the committed one (the same tuning sweep), pins what the
// committed dispatch.json pins, entry by entry: a header exported before a plan field existed
// leaves that field zero-initialised, a pin nobody measured.
TEST(CommittedTable, HeaderPinsWhatTheCommittedJsonPins) {
  const gdn::detail::DispatchTable table = gdn::detail::compiled_dispatch_table();
  if (table.entries.empty()) GTEST_SKIP() << "this build has no dispatch table (GDN_DISPATCH_TABLE=none)";
  const std::filesystem::path committed = std::filesystem::path(GDN_SOURCE_ROOT) / "kernels/tables/dispatch.json";
  std::ifstream in(committed);
  std::stringstream text;
  text << in.rdbuf();
  gdn::detail::DispatchTable json;
  std::string error;
  ASSERT_TRUE(gdn::detail::parse_dispatch_json(text.str(), committed.string(), &json, &error)) << error;
  ASSERT_NE(table.info, nullptr);
  ASSERT_NE(json.info, nullptr);
  if (table.info->device_uuid != json.info->device_uuid || table.info->sweep_id != json.info->sweep_id ||
      table.info->sweep_started_at != json.info->sweep_started_at)
    GTEST_SKIP() << "this build compiles another table than kernels/tables";
  ASSERT_EQ(table.entries.size(), json.entries.size());
  for (std::size_t i = 0; i < table.entries.size(); ++i) {
    EXPECT_EQ(table.entries[i].variant, json.entries[i].variant) << "entry " << i;
    EXPECT_TRUE(gdn::same_pins(table.entries[i].plan, json.entries[i].plan))
        << "entry " << i << " (" << table.entries[i].variant << "): the header pins "
        << gdn::pins_suffix(table.entries[i].plan) << ", the json " << gdn::pins_suffix(json.entries[i].plan);
  }
}

TEST(CommittedTable, SaysWhereItWasTuned) {
  const gdn::detail::DispatchTable table = gdn::detail::compiled_dispatch_table();
  if (table.entries.empty()) GTEST_SKIP() << "this build has no dispatch table (GDN_DISPATCH_TABLE=none)";
  ASSERT_NE(table.info, nullptr);
  EXPECT_FALSE(std::string(table.info->device_name).empty());
  EXPECT_GT(table.info->sweep_id, 0);
}
