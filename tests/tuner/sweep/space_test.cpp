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
