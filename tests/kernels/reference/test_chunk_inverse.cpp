// The blocked gate-free inverse A0 = (I + N)^-1 (16x16 forward substitution, merges
// 16 -> 32 -> 64) against plain forward substitution and against the definition.
#include <gtest/gtest.h>

#include <cmath>

#include "gdn/reference_chunk.hpp"
#include "gdn/testing/random.hpp"

namespace gdn {
namespace {

using ref::chunk::Mat;

// N of a realistic chunk: unit keys, beta in (0, 1).
Mat realistic_N(int64_t L, int K, testing::Rng& rng) {
  Mat k(L, K);
  std::vector<double> beta(static_cast<size_t>(L));
  for (int64_t r = 0; r < L; ++r) {
    double norm = 0;
    for (int i = 0; i < K; ++i) norm += std::pow(k(r, i) = rng.normal(), 2);
    for (int i = 0; i < K; ++i) k(r, i) /= std::sqrt(norm);
    beta[static_cast<size_t>(r)] = 1.0 / (1.0 + std::exp(-rng.normal()));
  }
  return ref::chunk::strict_lower_beta_kkt(k, beta);
}

double max_abs_diff(const Mat& a, const Mat& b) {
  double m = 0;
  for (size_t i = 0; i < a.a.size(); ++i) m = std::max(m, std::fabs(a.a[i] - b.a[i]));
  return m;
}

TEST(RefChunkInverse, BlockedEqualsSubstitutionAndInvertsForEveryChunkLength) {
  const uint64_t seed = testing::test_seed();
  SCOPED_TRACE(testing::seed_note(seed));
  testing::Rng rng(seed);
  double worst = 0;
  for (int64_t L : {1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64}) {
    for (int K : {8, 128}) {
      const Mat N = realistic_N(L, K, rng);
      const Mat A0 = ref::chunk::invert_unit_lower_blocked(N);
      ASSERT_EQ(A0.rows, L);
      const double vs_substitution = max_abs_diff(A0, ref::chunk::invert_unit_lower_substitution(N));
      Mat I_plus_N = N;
      for (int64_t i = 0; i < L; ++i) I_plus_N(i, i) += 1;
      Mat identity(L, L);
      for (int64_t i = 0; i < L; ++i) identity(i, i) = 1;
      const double vs_definition = max_abs_diff(ref::chunk::matmul(I_plus_N, A0), identity);
      EXPECT_LE(vs_substitution, 1e-12) << "L=" << L << " K=" << K;
      EXPECT_LE(vs_definition, 1e-12) << "L=" << L << " K=" << K;
      for (int64_t r = 0; r < L; ++r) {  // unit lower triangular
        EXPECT_EQ(A0(r, r), 1.0);
        for (int64_t c = r + 1; c < L; ++c) EXPECT_EQ(A0(r, c), 0.0);
      }
      worst = std::max({worst, vs_substitution, vs_definition});
    }
  }
  std::printf("[chunk-inverse] worst max-abs error %.1e\n", worst);
}

TEST(RefChunkInverse, RejectsMoreThanOneChunk) {
  try {
    ref::chunk::invert_unit_lower_blocked(Mat(65, 65));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("64"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gdn
