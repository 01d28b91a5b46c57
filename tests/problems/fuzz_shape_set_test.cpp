// Fuzz of the shape-set parser: the committed sets, mutated at random (seeded, bounded in
// time), must parse or be refused with ShapeSetError - never another exception, a crash or a
// runaway allocation - and what parses must be self-consistent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "gdn/problems/shape_set.hpp"
#include "gdn/testing/mutation_fuzz.hpp"

namespace {

namespace fs = std::filesystem;
using gdn::problems::ShapeSet;
using gdn::problems::ShapeSetError;

std::vector<std::string> committed_sets() {
  std::vector<std::string> texts;
  for (const auto& e : fs::directory_iterator(fs::path(GDN_TEST_SOURCE_ROOT) / "scripts" / "shapes"))
    if (e.path().extension() == ".csv") {
      std::stringstream s;
      s << std::ifstream(e.path()).rdbuf();
      texts.push_back(s.str());
    }
  return texts;
}

void check_consistent(const ShapeSet& set, const std::string& input, std::size_t iteration) {
  ASSERT_FALSE(set.problems.empty()) << "iteration " << iteration;
  std::set<std::string> names;
  for (const auto& p : set.problems) {
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate name '" << p.name << "' at iteration " << iteration;
    const auto offsets = p.cu_seqlens();
    ASSERT_EQ(offsets.size(), p.seqlens.size() + 1) << "iteration " << iteration;
    EXPECT_EQ(offsets.back(), p.total_tokens()) << "iteration " << iteration;
    for (const auto len : p.seqlens) EXPECT_GE(len, 0) << "iteration " << iteration;
  }
  // Parsing is a function of the text: the same input gives the same content hash.
  EXPECT_EQ(gdn::problems::parse_shape_set(input, "fuzz", "<fuzz>").content_hash, set.content_hash)
      << "iteration " << iteration;
}

}  // namespace

TEST(ShapeSetFuzz, MutatedSetsParseOrAreRefusedCleanly) {
  gdn::testing::FuzzOptions o;
  o.seed = 20261201;
  o.budget = std::chrono::milliseconds(6000);
  o.tokens = {",", "\n", "+", "*", "-1", "0", "1048577", "99999999999999999999", "1*1048576", "\xEF\xBB\xBF",
              "#", "\r\n", "packed", "batched", "fp32", "\"", " ", "\t", std::string(1, '\0')};
  std::size_t parsed = 0, refused = 0;
  const std::size_t tried = gdn::testing::run_mutation_fuzz(committed_sets(), o, [&](const std::string& input,
                                                                                      std::size_t i) {
    try {
      const ShapeSet set = gdn::problems::parse_shape_set(input, "fuzz", "<fuzz>");
      ++parsed;
      check_consistent(set, input, i);
    } catch (const ShapeSetError& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("<fuzz>"), std::string::npos) << "iteration " << i << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << o.seed << " iteration " << i << ": " << typeid(e).name() << ": " << e.what();
    }
  });
  std::printf("    %zu inputs (seed %llu): %zu parsed, %zu refused\n", tried,
              static_cast<unsigned long long>(o.seed), parsed, refused);
  EXPECT_GT(tried, 100u);
  EXPECT_GT(parsed, 0u) << "the mutations never kept a set valid: the fuzz explores nothing";
  EXPECT_GT(refused, 0u);
}
