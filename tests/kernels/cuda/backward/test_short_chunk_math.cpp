// The short-chunk repair's math (kernels/cuda/backward/short_chunk_math.hpp) on the host, run
// serially, against the float64 chunk backward of the reference (chunk_backward): the same
// formulas in fp32 agree to fp32 accuracy on every short length, with and without a start
// state and an end-state gradient, under strong and no decay; and run in the order a block may
// run it, the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "backward/short_chunk_math.hpp"
#include "gdn/reference_chunk.hpp"

namespace gdn::bwd::short_chunk {
namespace {

namespace rc = ref::chunk;

// The executor of the host: every loop serial, in order.
struct SerialExec {
  template <class F>
  void each(int n, F f) {
    for (int i = 0; i < n; ++i) f(i);
  }
  template <class F>
  void each_nowait(int n, F f) {
    each(n, f);
  }
  template <class F>
  float sum(int n, F f) {
    float acc = 0.f;
    for (int i = 0; i < n; ++i) acc += f(i);
    return acc;
  }
};

// The items of each barrier interval (the each_nowait steps up to and including the closing
// each, or a sum) run in reverse: a block runs them in any order, so an item that read what
// another item of its interval writes would see another value here than serially.
struct ReverseExec {
  std::vector<std::function<void()>> pending;
  template <class F>
  void each_nowait(int n, F f) {
    for (int i = 0; i < n; ++i) pending.push_back([f, i] { f(i); });
  }
  template <class F>
  void each(int n, F f) {
    each_nowait(n, f);
    run_pending();
  }
  template <class F>
  float sum(int n, F f) {
    run_pending();  // the sum's items read only S and dS'
    float acc = 0.f;
    for (int i = 0; i < n; ++i) acc += f(i);
    return acc;
  }
  void run_pending() {
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) (*it)();
    pending.clear();
  }
};

double rel(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct Case {
  int L;
  bool with_s, with_ds;
  double decay;  // g = -decay * softplus(...)
};

void check_case(const Case& cs, uint64_t seed) {
  SCOPED_TRACE("L=" + std::to_string(cs.L) + " S=" + std::to_string(cs.with_s) +
               " dS'=" + std::to_string(cs.with_ds) + " decay=" + std::to_string(cs.decay));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  const int L = cs.L;
  const double scale = 1.0 / std::sqrt(double(kDim));
  rc::ChunkIn in;
  in.Q = rc::Mat(L, kDim);
  in.K = rc::Mat(L, kDim);
  in.V = rc::Mat(L, kDim);
  // fp32-representable inputs, so both sides start from the same numbers; q, k l2-normalised.
  const auto f32 = [](double x) { return double(float(x)); };
  for (rc::Mat* m : {&in.Q, &in.K}) {
    for (int r = 0; r < L; ++r) {
      double n2 = 0;
      for (int c = 0; c < kDim; ++c) n2 += ((*m)(r, c) = nd(rng)) * (*m)(r, c);
      for (int c = 0; c < kDim; ++c) (*m)(r, c) = f32((*m)(r, c) / std::sqrt(n2));
    }
  }
  for (double& x : in.V.a) x = f32(nd(rng));
  for (int r = 0; r < L; ++r) {
    in.g.push_back(f32(-cs.decay * std::log1p(std::exp(0.5 * nd(rng) + 1.0))));
    in.beta.push_back(f32(1.0 / (1.0 + std::exp(-nd(rng)))));
  }
  rc::Mat S(kDim, kDim), dS(kDim, kDim), dO(L, kDim);
  if (cs.with_s) for (double& x : S.a) x = f32(nd(rng));
  if (cs.with_ds) for (double& x : dS.a) x = f32(nd(rng));
  for (double& x : dO.a) x = f32(nd(rng));
  const rc::ChunkBwd ref = rc::chunk_backward(in, S, dO, dS, scale);

  auto gw = std::make_unique<GroupWork>();
  auto hw = std::make_unique<HeadWork>();
  float gam = 0.f;
  for (int r = 0; r < L; ++r) {
    for (int c = 0; c < kDim; ++c) {
      gw->q[r][c] = float(in.Q(r, c));
      gw->k[r][c] = float(in.K(r, c));
      gw->dq[r][c] = gw->dk[r][c] = 0.f;
      hw->w[r][c] = float(in.V(r, c));
      hw->d_o[r][c] = float(dO(r, c));
    }
    gam += float(in.g[r]);
    hw->gam[r] = gam;
    hw->beta[r] = float(in.beta[r]);
  }
  std::vector<double> dh0(size_t(kDim) * kDim, 0.0);
  SerialExec x;
  head_backward(
      x, *gw, *hw, L, float(scale), StateInputs{cs.with_s, cs.with_ds, true},
      [&](int k, int j) { return float(S(k, j)); }, [&](int k, int j) { return float(dS(k, j)); },
      [&](int k, int j, float v) { dh0[size_t(k) * kDim + j] = v; });

  std::vector<double> dq, dk, dv, dg, dbeta;
  for (int r = 0; r < L; ++r) {
    for (int c = 0; c < kDim; ++c) {
      dq.push_back(gw->dq[r][c]);
      dk.push_back(gw->dk[r][c]);
      dv.push_back(hw->w[r][c]);  // dW' over W'
    }
    dg.push_back(hw->dg[r]);
    dbeta.push_back(hw->dbeta[r]);
  }
  EXPECT_LT(rel(dq, ref.dQ.a), 1e-4);
  EXPECT_LT(rel(dk, ref.dK.a), 1e-4);
  EXPECT_LT(rel(dv, ref.dV.a), 1e-4);
  EXPECT_LT(rel(dbeta, ref.dbeta), 1e-3);
  EXPECT_LT(rel(dg, ref.dg), 1e-3);
  EXPECT_LT(rel(dh0, ref.dS.a), 1e-4);
}

TEST(ShortChunkMath, AgreesWithTheFloat64ChunkBackward) {
  uint64_t seed = 1;
  for (int L : {1, 2, 7, 15})
    for (bool with_s : {false, true})
      for (bool with_ds : {false, true})
        for (double decay : {0.0, 1.0, 16.0}) check_case({L, with_s, with_ds, decay}, seed++);
}

// Each head adds its dq, dk to the group's sums: two heads give the sum of two single runs.
TEST(ShortChunkMath, GroupSumsAddEachHead) {
  auto gw = std::make_unique<GroupWork>();
  auto hw = std::make_unique<HeadWork>();
  const int L = 3;
  for (int r = 0; r < L; ++r) {
    for (int c = 0; c < kDim; ++c) {
      gw->q[r][c] = gw->k[r][c] = (r == c % 3) ? 0.5f : 0.f;
      gw->dq[r][c] = gw->dk[r][c] = 0.f;
    }
  }
  const auto run = [&]() {
    for (int r = 0; r < L; ++r) {
      for (int c = 0; c < kDim; ++c) hw->w[r][c] = hw->d_o[r][c] = 0.01f * float(c + r);
      hw->gam[r] = -0.1f * float(r + 1);
      hw->beta[r] = 0.5f;
    }
    SerialExec x;
    head_backward(
        x, *gw, *hw, L, 0.1f, StateInputs{false, true, false}, [](int, int) { return 0.f; },
        [](int k, int j) { return k == j ? 1.f : 0.f; }, [](int, int, float) {});
  };
  run();
  std::vector<float> once;
  for (int r = 0; r < L; ++r)
    for (int c = 0; c < kDim; ++c) once.push_back(gw->dq[r][c]), once.push_back(gw->dk[r][c]);
  ASSERT_NE(*std::max_element(once.begin(), once.end()), 0.f);
  run();
  size_t i = 0;
  for (int r = 0; r < L; ++r)
    for (int c = 0; c < kDim; ++c) {
      EXPECT_EQ(gw->dq[r][c], 2 * once[i++]);  // x + x is exact
      EXPECT_EQ(gw->dk[r][c], 2 * once[i++]);
    }
}

// The block's executor relies on two properties the serial run cannot show: no item reads what
// another item of its barrier interval writes, and nothing reads an entry no step wrote (the
// block's shared memory holds the previous head's values there). Run in reverse on work that
// starts as NaN apart from the inputs, every output has the serial run's bits.
TEST(ShortChunkMath, ItemsReadNeitherTheirIntervalsWritesNorUnwrittenEntries) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int L : {1, 6, 15})
    for (bool has_s : {false, true})
      for (bool has_ds : {false, true}) {
        SCOPED_TRACE("L=" + std::to_string(L) + " S=" + std::to_string(has_s) +
                     " dS'=" + std::to_string(has_ds));
        std::mt19937 rng(uint32_t(100 * L + 10 * has_s + has_ds));
        std::normal_distribution<float> nd;
        std::vector<float> S(size_t(kDim) * kDim), dS(size_t(kDim) * kDim);
        for (float& v : S) v = nd(rng);
        for (float& v : dS) v = nd(rng);
        auto gw = std::make_unique<GroupWork>();
        auto hw = std::make_unique<HeadWork>();
        float gam = 0.f;
        for (int r = 0; r < L; ++r) {
          for (int c = 0; c < kDim; ++c) {
            gw->q[r][c] = 0.09f * nd(rng);
            gw->k[r][c] = 0.09f * nd(rng);
            gw->dq[r][c] = gw->dk[r][c] = 0.f;
            hw->w[r][c] = nd(rng);
            hw->d_o[r][c] = nd(rng);
          }
          gam -= 0.3f * std::fabs(nd(rng));
          hw->gam[r] = gam;
          hw->beta[r] = 1.f / (1.f + std::exp(-nd(rng)));
        }
        // The same inputs over NaN everywhere else.
        auto gw_nan = std::make_unique<GroupWork>();
        auto hw_nan = std::make_unique<HeadWork>();
        std::fill_n(reinterpret_cast<float*>(gw_nan.get()), sizeof(GroupWork) / sizeof(float), nan);
        std::fill_n(reinterpret_cast<float*>(hw_nan.get()), sizeof(HeadWork) / sizeof(float), nan);
        for (int r = 0; r < L; ++r) {
          std::copy_n(gw->q[r], kDim, gw_nan->q[r]);
          std::copy_n(gw->k[r], kDim, gw_nan->k[r]);
          std::copy_n(gw->dq[r], kDim, gw_nan->dq[r]);
          std::copy_n(gw->dk[r], kDim, gw_nan->dk[r]);
          std::copy_n(hw->w[r], kDim, hw_nan->w[r]);
          std::copy_n(hw->d_o[r], kDim, hw_nan->d_o[r]);
          hw_nan->gam[r] = hw->gam[r];
          hw_nan->beta[r] = hw->beta[r];
        }
        const StateInputs in{has_s, has_ds, true};
        const auto s_of = [&](int k, int j) { return S[size_t(k) * kDim + j]; };
        const auto ds_of = [&](int k, int j) { return dS[size_t(k) * kDim + j]; };
        std::vector<float> dh0(size_t(kDim) * kDim, nan), dh0_rev(size_t(kDim) * kDim, nan);
        SerialExec serial;
        head_backward(serial, *gw, *hw, L, 0.088f, in, s_of, ds_of,
                      [&](int k, int j, float v) { dh0[size_t(k) * kDim + j] = v; });
        ReverseExec reverse;
        head_backward(reverse, *gw_nan, *hw_nan, L, 0.088f, in, s_of, ds_of,
                      [&](int k, int j, float v) { dh0_rev[size_t(k) * kDim + j] = v; });
        ASSERT_TRUE(reverse.pending.empty()) << "a step without a closing barrier";
        const auto same = [](const float* a, const float* b, size_t n) {
          return std::memcmp(a, b, n * sizeof(float)) == 0;
        };
        for (int r = 0; r < L; ++r) {
          EXPECT_TRUE(same(gw->dq[r], gw_nan->dq[r], kDim)) << "dq row " << r;
          EXPECT_TRUE(same(gw->dk[r], gw_nan->dk[r], kDim)) << "dk row " << r;
          EXPECT_TRUE(same(hw->w[r], hw_nan->w[r], kDim)) << "dv row " << r;
        }
        EXPECT_TRUE(same(hw->dg, hw_nan->dg, L));
        EXPECT_TRUE(same(hw->dbeta, hw_nan->dbeta, L));
        EXPECT_TRUE(same(dh0.data(), dh0_rev.data(), dh0.size()));
        EXPECT_FALSE(std::isnan(gw->dq[L - 1][0]) || std::isnan(dh0[0]));
      }
}

}  // namespace
}  // namespace gdn::bwd::short_chunk
