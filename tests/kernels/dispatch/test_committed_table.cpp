// The dispatch table compiled into this build (by default the committed H200 table in
// kernels/tables/) only helps if the variants it names are registered: a table entry whose
// variant is missing silently falls back to the default rule. Runs without a device.
#include <gtest/gtest.h>

#include <string>

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

TEST(CommittedTable, SaysWhereItWasTuned) {
  const gdn::detail::DispatchTable table = gdn::detail::compiled_dispatch_table();
  if (table.entries.empty()) GTEST_SKIP() << "this build has no dispatch table (GDN_DISPATCH_TABLE=none)";
  ASSERT_NE(table.info, nullptr);
  EXPECT_FALSE(std::string(table.info->device_name).empty());
  EXPECT_GT(table.info->sweep_id, 0);
}
