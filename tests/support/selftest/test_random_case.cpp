// The random case generator: reproducible, the doubles are exactly the device buffers'
// values, and the two distributions have the properties docs/spec.md asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn::testing {
namespace {

ref::Shape small_shape() { return packed_shape({5, 0, 70}, 2, 8, 16, 32); }

TEST(SupportRandomCase, SameSeedSameCaseDifferentSeedDifferentCase) {
  const RandomCase a = make_random_case(small_shape(), 42);
  const RandomCase b = make_random_case(small_shape(), 42);
  const RandomCase c = make_random_case(small_shape(), 43);
  EXPECT_EQ(a.host.q, b.host.q);
  EXPECT_EQ(a.host.g, b.host.g);
  EXPECT_EQ(a.host.dht, b.host.dht);
  EXPECT_NE(a.host.q, c.host.q);
  EXPECT_NE(a.host.g, c.host.g);
}

TEST(SupportRandomCase, SizesFollowTheApiLayouts) {
  const ref::Shape s = small_shape();  // 75 tokens, N = 3
  const RandomCase c = make_random_case(s, test_seed());
  EXPECT_EQ(c.host.q.size(), 75u * 2 * 16);
  EXPECT_EQ(c.host.k.size(), 75u * 2 * 16);
  EXPECT_EQ(c.host.v.size(), 75u * 8 * 32);
  EXPECT_EQ(c.host.d_o.size(), 75u * 8 * 32);
  EXPECT_EQ(c.host.g.size(), 75u * 8);
  EXPECT_EQ(c.host.beta.size(), 75u * 8);
  EXPECT_EQ(c.host.h0.size(), 3u * 8 * 16 * 32);
  EXPECT_EQ(c.host.dht.size(), 3u * 8 * 16 * 32);
  EXPECT_EQ(c.host.cu_seqlens_i32(), (std::vector<int32_t>{0, 5, 5, 75}));
  EXPECT_NO_THROW(ref::validate(c.shape, c.inputs, c.grads));
}

TEST(SupportRandomCase, ReferenceInputsAreTheRoundedDeviceValues) {
  for (HalfType type : {HalfType::BF16, HalfType::FP16}) {
    CaseOptions options;
    options.dtype = type;
    const RandomCase c = make_random_case(small_shape(), test_seed(), options);
    EXPECT_EQ(c.inputs.q, to_double(c.host.q, type));
    EXPECT_EQ(c.inputs.k, to_double(c.host.k, type));
    EXPECT_EQ(c.inputs.v, to_double(c.host.v, type));
    EXPECT_EQ(c.grads.d_o, to_double(c.host.d_o, type));
    EXPECT_EQ(c.inputs.g, to_double(c.host.g));
    EXPECT_EQ(c.inputs.beta, to_double(c.host.beta));
    EXPECT_EQ(c.inputs.h0, to_double(c.host.h0));
    EXPECT_EQ(c.grads.dht, to_double(c.host.dht));
  }
}

TEST(SupportRandomCase, OptionalTensorsAndStreamsAreIndependent) {
  CaseOptions bare;
  bare.with_h0 = false;
  bare.with_dht = false;
  const uint64_t seed = test_seed();
  const RandomCase full = make_random_case(small_shape(), seed);
  const RandomCase c = make_random_case(small_shape(), seed, bare);
  EXPECT_TRUE(c.host.h0.empty() && c.inputs.h0.empty());
  EXPECT_TRUE(c.host.dht.empty() && c.grads.dht.empty());
  EXPECT_EQ(c.host.q, full.host.q);  // turning h0 off does not shift the other tensors
  EXPECT_EQ(c.host.g, full.host.g);

  CaseOptions device_only;
  device_only.with_reference = false;
  const RandomCase d = make_random_case(small_shape(), seed, device_only);
  EXPECT_TRUE(d.inputs.q.empty());
  EXPECT_EQ(d.host.v, full.host.v);
}

TEST(SupportRandomCase, TestDistribution) {
  const ref::Shape s = dense_shape(2, 200, 2, 6, 16, 32);
  const RandomCase c = make_random_case(s, test_seed());
  SCOPED_TRACE(seed_note(c.seed));
  ASSERT_EQ(c.head_decay.size(), 6u);
  EXPECT_EQ(c.head_decay.front(), 0.0);
  EXPECT_EQ(c.head_decay.back(), 16.0);
  for (double a : c.head_decay) EXPECT_TRUE(a >= 0 && a <= 16);
  for (int64_t t = 0; t < 400; ++t)
    for (int h = 0; h < 6; ++h) {
      const float g = c.host.g[static_cast<size_t>(t * 6 + h)];
      const float b = c.host.beta[static_cast<size_t>(t * 6 + h)];
      ASSERT_LE(g, 0.0f);
      if (h == 0) {
        ASSERT_EQ(g, 0.0f);
      }
      if (h == 5) {
        ASSERT_LT(g, -16.0f * 0.2f);  // softplus(0.5 x + 1) > 0.2 for x > -6.2
      }
      ASSERT_TRUE(b > 0.0f && b < 1.0f);
    }
  for (int64_t row = 0; row < 400 * 2; ++row) {  // q, k rows are unit vectors (to bf16)
    double qn = 0, kn = 0;
    for (int i = 0; i < 16; ++i) {
      qn += std::pow(c.inputs.q[static_cast<size_t>(row * 16 + i)], 2);
      kn += std::pow(c.inputs.k[static_cast<size_t>(row * 16 + i)], 2);
    }
    ASSERT_NEAR(std::sqrt(qn), 1.0, 1e-2);
    ASSERT_NEAR(std::sqrt(kn), 1.0, 1e-2);
  }
}

TEST(SupportRandomCase, SingleHeadTestDistributionCoversBothExtremes) {
  const ref::Shape s = dense_shape(1, 4, 1, 1, 4, 4);
  std::vector<double> seen;
  for (uint64_t seed = 0; seed < 3; ++seed) seen.push_back(make_random_case(s, seed).head_decay[0]);
  EXPECT_NE(std::find(seen.begin(), seen.end(), 0.0), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), 16.0), seen.end());
}

TEST(SupportRandomCase, BenchDistribution) {
  CaseOptions options;
  options.distribution = Distribution::Bench;
  const ref::Shape s = packed_shape({300}, 2, 8, 16, 32);
  const RandomCase c = make_random_case(s, test_seed(), options);
  SCOPED_TRACE(seed_note(c.seed));
  ASSERT_EQ(c.zero_gate_heads.size(), 2u);  // Hv / 4
  for (int h = 0; h < 8; ++h) {
    const bool zeroed = std::find(c.zero_gate_heads.begin(), c.zero_gate_heads.end(), h) !=
                        c.zero_gate_heads.end();
    double min_g = 0;
    for (int64_t t = 0; t < 300; ++t) {
      const float g = c.host.g[static_cast<size_t>(t * 8 + h)];
      ASSERT_LE(g, 0.0f);
      if (zeroed) {
        ASSERT_EQ(g, 0.0f);
      }
      min_g = std::min<double>(min_g, g);
    }
    if (!zeroed) {
      EXPECT_LT(min_g, -0.01);
    }  // logsigmoid(randn)/16: well below 0 somewhere
  }
}

TEST(SupportRandomCase, RejectsAShapeThatIsNotAProblem) {
  ref::Shape s = dense_shape(1, 10, 3, 4, 16, 16);
  try {
    make_random_case(s, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Hv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gdn::testing
