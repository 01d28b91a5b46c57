// The comparison helpers: poison detection, NaN, bars, report.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "gdn/testing/compare.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn::testing {
namespace {

TEST(SupportPoison, CountsEveryElementNotOverwritten) {
  std::vector<uint16_t> h(10, 0);
  std::vector<float> f(10, 0.0f);
  poison(h);
  poison(f);
  EXPECT_EQ(count_poisoned(h), 10);
  EXPECT_EQ(count_poisoned(f), 10);
  for (int i = 0; i < 7; ++i) {
    h[static_cast<size_t>(i)] = float_to_bf16(1.0f);
    f[static_cast<size_t>(i)] = 1.0f;
  }
  EXPECT_EQ(count_poisoned(h), 3);
  EXPECT_EQ(count_poisoned(f), 3);
  f[8] = std::numeric_limits<float>::quiet_NaN();  // another NaN is not the poison pattern
  EXPECT_EQ(count_poisoned(f), 2);
}

TEST(SupportCheckOutput, PassesWithinTheBarAndFailsBeyondIt) {
  const std::vector<double> ref{1.0, -2.0, 3.0, 0.5};
  std::vector<float> got{1.001f, -2.0f, 3.0f, 0.5f};
  EXPECT_TRUE(check_output("x", got, ref, 1e-3).passed());
  got[0] = 1.1f;
  const OutputCheck c = check_output("x", got, ref, 1e-3);
  EXPECT_FALSE(c.passed());
  EXPECT_NE(c.describe().find("FAIL"), std::string::npos) << c.describe();
}

TEST(SupportCheckOutput, NanNeverPasses) {
  const std::vector<double> ref{1.0, 2.0};
  const std::vector<double> got{1.0, std::nan("")};
  const OutputCheck c = check_output("x", got, ref, 1e9);
  EXPECT_EQ(c.nan_count, 1);
  EXPECT_FALSE(c.passed());
}

TEST(SupportCheckOutput, APoisonedElementFailsEvenWhenTheErrorWouldPass) {
  const std::vector<double> ref(1000, 1.0);
  std::vector<uint16_t> got(1000, float_to_bf16(1.0f));
  got[999] = kPoisonHalf;
  const OutputCheck c = check_output("o", got, HalfType::BF16, ref, 1e9);
  EXPECT_EQ(c.poisoned, 1);
  EXPECT_FALSE(c.passed());
}

TEST(SupportCheckOutput, SizeMismatchNamesTheOutput) {
  try {
    check_output("dq", std::vector<double>(3), std::vector<double>(4), 1.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dq"), std::string::npos) << e.what();
  }
}

TEST(SupportCheckReport, ForwardAndBackwardAgainstTheReference) {
  const RandomCase c = make_random_case(packed_shape({3, 70}, 1, 2, 8, 8), 7);
  const ref::FwdOutputs rf = ref::oracle_forward(c.shape, c.inputs);
  DeviceFwdResult fwd{std::vector<uint16_t>(rf.o.size()), std::vector<float>(rf.ht.size())};
  for (size_t i = 0; i < rf.o.size(); ++i) fwd.o[i] = float_to_bf16(static_cast<float>(rf.o[i]));
  for (size_t i = 0; i < rf.ht.size(); ++i) fwd.ht[i] = static_cast<float>(rf.ht[i]);
  CheckReport r = check_forward(c, rf, fwd);
  EXPECT_TRUE(r.passed()) << r.summary();
  EXPECT_LT(r.at("o").rel_rms, 5e-3);
  fwd.ht[5] = std::bit_cast<float>(kPoisonFloatBits);
  r = check_forward(c, rf, fwd);
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(r.at("ht").passed());
  EXPECT_TRUE(r.at("o").passed());

  const ref::BwdOutputs rb = ref::oracle_backward(c.shape, c.inputs, c.grads);
  auto half = [](const std::vector<double>& x) {
    std::vector<uint16_t> h(x.size());
    for (size_t i = 0; i < x.size(); ++i) h[i] = float_to_bf16(static_cast<float>(x[i]));
    return h;
  };
  auto single = [](const std::vector<double>& x) { return std::vector<float>(x.begin(), x.end()); };
  DeviceBwdResult bwd{half(rb.dq), half(rb.dk), half(rb.dv), single(rb.dg), single(rb.dbeta),
                      single(rb.dh0)};
  EXPECT_TRUE(check_backward(c, rb, bwd).passed()) << check_backward(c, rb, bwd).summary();
  bwd.dg[0] += 100.0f;  // a wrong gradient fails its own bar
  r = check_backward(c, rb, bwd);
  EXPECT_FALSE(r.passed());
  EXPECT_FALSE(r.at("dg").passed());
  EXPECT_THROW(r.at("nonexistent"), std::out_of_range);
}

}  // namespace
}  // namespace gdn::testing
