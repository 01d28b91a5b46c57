// The seeded inputs of the correctness gate and the timed measurements (tuner/src/gate_inputs):
// drawn in parallel blocks, yet a function of the seed alone, with docs/spec.md section 4's
// distribution, and the float64 reference holding exactly the values the kernels see.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "gate_inputs.hpp"

namespace gdn::tuner {
namespace {

// Rows enough for several blocks of every tensor (4096-row and 2^20-value blocks).
constexpr std::int64_t kRows = 9000;
constexpr int kHk = 2, kHv = 8, kDim = 128;

TEST(GateInputs, SameSeedSameValuesOtherSeedOtherValues) {
  const auto a = make_gate_inputs(kRows, kHk, kHv, kDim, kDim, 3, GDN_BF16, 7, false);
  const auto b = make_gate_inputs(kRows, kHk, kHv, kDim, kDim, 3, GDN_BF16, 7, false);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.v, b.v);
  EXPECT_EQ(a.g, b.g);
  EXPECT_EQ(a.beta, b.beta);
  EXPECT_EQ(a.h0, b.h0);
  const auto c = make_gate_inputs(kRows, kHk, kHv, kDim, kDim, 3, GDN_BF16, 8, false);
  EXPECT_NE(a.v, c.v);
  EXPECT_NE(a.q, c.q);
}

TEST(GateInputs, ShapesAndDistribution) {
  const auto in = make_gate_inputs(kRows, kHk, kHv, kDim, kDim, 3, GDN_FP16, 11, false);
  ASSERT_EQ(in.q.size(), static_cast<std::size_t>(kRows * kHk * kDim));
  ASSERT_EQ(in.v.size(), static_cast<std::size_t>(kRows * kHv * kDim));
  ASSERT_EQ(in.g.size(), static_cast<std::size_t>(kRows * kHv));
  ASSERT_EQ(in.h0.size(), static_cast<std::size_t>(3 * kHv * kDim * kDim));
  // q, k rows are unit vectors up to the fp16 rounding of each element.
  for (std::int64_t r = 0; r < kRows * kHk; r += 997) {
    double norm = 0;
    for (int i = 0; i < kDim; ++i) norm += std::pow(from_half_bits(in.k[r * kDim + i], GDN_FP16), 2);
    EXPECT_NEAR(std::sqrt(norm), 1.0, 2e-3) << "row " << r;
  }
  // v and h0 standard normal: mean and variance over millions of draws.
  double sum = 0, sq = 0;
  for (auto b : in.v) {
    const double x = from_half_bits(b, GDN_FP16);
    sum += x;
    sq += x * x;
  }
  const double n = static_cast<double>(in.v.size());
  EXPECT_NEAR(sum / n, 0.0, 5e-3);
  EXPECT_NEAR(sq / n, 1.0, 1e-2);
  // Blocks are independent streams: no block repeats the first one.
  std::set<std::uint16_t> firsts;
  for (std::size_t at = 0; at < in.v.size(); at += std::size_t{1} << 20) firsts.insert(in.v[at]);
  EXPECT_GT(firsts.size(), 1u);
  // beta in (0, 1); g <= 0, exactly 0 on head 0 (no decay), the strongest decay on the last head.
  double g_last = 0;
  for (std::size_t i = 0; i < in.g.size(); ++i) {
    EXPECT_GT(in.beta[i], 0.f);
    EXPECT_LT(in.beta[i], 1.f);
    EXPECT_LE(in.g[i], 0.f);
    if (i % kHv == 0) EXPECT_EQ(in.g[i], 0.f);
    if (i % kHv == kHv - 1) g_last += in.g[i];
  }
  EXPECT_LT(g_last / kRows, -16.0);  // -16 softplus(0.5 z + 1), mean softplus > 1
}

TEST(GateInputs, ReferenceHoldsExactlyTheRoundedValues) {
  const auto in = make_gate_inputs(5000, kHk, kHv, kDim, kDim, 2, GDN_BF16, 3, true);
  ASSERT_EQ(in.reference.v.size(), in.v.size());
  ASSERT_EQ(in.reference.q.size(), in.q.size());
  for (std::size_t i = 0; i < in.v.size(); i += 101) EXPECT_EQ(in.reference.v[i], from_half_bits(in.v[i], GDN_BF16));
  for (std::size_t i = 0; i < in.q.size(); i += 103) EXPECT_EQ(in.reference.q[i], from_half_bits(in.q[i], GDN_BF16));
  for (std::size_t i = 0; i < in.g.size(); i += 7) {
    EXPECT_EQ(in.reference.g[i], static_cast<double>(in.g[i]));
    EXPECT_EQ(in.reference.beta[i], static_cast<double>(in.beta[i]));
  }
  // Without the reference, the same device values.
  const auto plain = make_gate_inputs(5000, kHk, kHv, kDim, kDim, 2, GDN_BF16, 3, false);
  EXPECT_EQ(plain.v, in.v);
  EXPECT_TRUE(plain.reference.v.empty());
}

TEST(GateInputs, BadDtypeIsAnErrorNamingIt) {
  try {
    make_gate_inputs(10, 1, 1, kDim, kDim, 1, GDN_FP32, 1, false);
    FAIL() << "fp32 q/k/v accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dtype"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gdn::tuner
