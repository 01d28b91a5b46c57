// rel_rms, the metric every correctness bar uses: ||x - ref|| / ||ref||, NaN never passes,
// a zero reference only matches zero.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gdn/reference.hpp"

namespace gdn {
namespace {

TEST(RefRelRms, KnownValues) {
  EXPECT_EQ(ref::rel_rms({1, 2, 3}, {1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(ref::rel_rms({3, 0}, {3, 4}), 4.0 / 5.0);
  EXPECT_NEAR(ref::rel_rms({1.1, 2.0}, {1.0, 2.0}), 0.1 / std::sqrt(5.0), 1e-15);
}

TEST(RefRelRms, NanNeverPasses) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(ref::rel_rms({1, nan}, {1, 2})));
  EXPECT_TRUE(std::isnan(ref::rel_rms({1, 2}, {1, nan})));
  EXPECT_FALSE(ref::rel_rms({1, nan}, {1, 2}) <= 1e300);  // the way bars are written
}

TEST(RefRelRms, ZeroReference) {
  EXPECT_EQ(ref::rel_rms({0, 0}, {0, 0}), 0.0);
  EXPECT_EQ(ref::rel_rms({}, {}), 0.0);
  EXPECT_EQ(ref::rel_rms({0, 1e-300}, {0, 0}), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(ref::rel_rms({std::numeric_limits<double>::infinity()}, {1})));
}

TEST(RefRelRms, ExtremeMagnitudesNeitherUnderflowNorOverflow) {
  EXPECT_NEAR(ref::rel_rms({2e-200, 0}, {1e-200, 0}), 1.0, 1e-12);
  EXPECT_NEAR(ref::rel_rms({2e200, 0}, {1e200, 0}), 1.0, 1e-12);
}

TEST(RefRelRms, SizeMismatchIsAnError) {
  EXPECT_THROW(ref::rel_rms({1, 2}, {1}), std::invalid_argument);
}

}  // namespace
}  // namespace gdn
