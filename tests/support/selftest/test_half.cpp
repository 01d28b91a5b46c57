// bf16 / fp16 conversion: round to nearest even, specials, exhaustive round trips.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "gdn/testing/half.hpp"
#include "gdn/testing/random.hpp"

namespace gdn::testing {
namespace {

float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

TEST(SupportBf16, ExactValuesAndTiesToEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(from_bits(0x3F808000)), 0x3F80);  // tie, even below
  EXPECT_EQ(float_to_bf16(from_bits(0x3F818000)), 0x3F82);  // tie, even above
  EXPECT_EQ(float_to_bf16(from_bits(0x3F808001)), 0x3F81);  // just above half
  EXPECT_EQ(float_to_bf16(from_bits(0x3F807FFF)), 0x3F80);  // just below half
}

TEST(SupportBf16, Specials) {
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds past the range
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // A NaN whose payload sits only in the dropped bits must not become infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(from_bits(0x7F800001)))));
}

TEST(SupportBf16, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float f = bf16_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16(f), b) << std::hex << b;
  }
}

// Nearest: no neighbouring bf16 value is closer to x than the one chosen.
TEST(SupportBf16, RandomFloatsRoundToNearest) {
  Rng rng(test_seed());
  for (int i = 0; i < 100000; ++i) {
    const float x = static_cast<float>(rng.normal() * std::exp2(rng.uniform(-20, 20)));
    const uint16_t b = float_to_bf16(x);
    const double err = std::fabs(double(x) - bf16_to_float(b));
    for (int step : {-1, 1}) {
      const double other = bf16_to_float(static_cast<uint16_t>(b + step));
      ASSERT_LE(err, std::fabs(double(x) - other)) << x;
    }
  }
}

TEST(SupportFp16, ExactValuesTiesAndRange) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7BFF);  // below the halfway point to 65536
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // tie to even = infinity
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie, even below
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie, even above
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);      // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);      // tie to even: zero
  EXPECT_EQ(float_to_fp16(3 * std::ldexp(1.0f, -25)), 0x0002);  // tie to even: 2
  EXPECT_EQ(float_to_fp16(std::ldexp(1023.5f, -24)), 0x0400);   // rounds up into the normals
  EXPECT_EQ(float_to_fp16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
}

TEST(SupportFp16, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const float f = fp16_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_fp16(f), b) << std::hex << b;
  }
}

TEST(SupportFp16, RandomFloatsMatchTheCompilersConversion) {
#if defined(__FLT16_MAX__)
  Rng rng(test_seed());
  for (int i = 0; i < 200000; ++i) {
    const float x = static_cast<float>(rng.normal() * std::exp2(rng.uniform(-28, 18)));
    const _Float16 h = static_cast<_Float16>(x);
    ASSERT_EQ(float_to_fp16(x), std::bit_cast<uint16_t>(h)) << x;
  }
#else
  GTEST_SKIP() << "this compiler has no _Float16 to compare with";
#endif
}

TEST(SupportHalf, RoundHelpers) {
  EXPECT_EQ(round_to_half(1.0 + 1e-4, HalfType::BF16), 1.0);
  EXPECT_EQ(round_to_half(1.0 + 1e-4, HalfType::FP16), 1.0);
  EXPECT_EQ(round_to_float(0.1), static_cast<double>(0.1f));
  const std::vector<double> d = to_double(std::vector<uint16_t>{0x3F80, 0xC000}, HalfType::BF16);
  EXPECT_EQ(d, (std::vector<double>{1.0, -2.0}));
}

}  // namespace
}  // namespace gdn::testing
