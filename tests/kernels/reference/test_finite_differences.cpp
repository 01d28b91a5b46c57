// The oracle's backward against central finite differences of its forward, in float64, on
// tiny problems: every gradient (dq, dk with the GVA reduction, dv, dbeta, dg, dh0), with and
// without dht, h0 present or absent, both state layouts, B > 1, varlen with a zero-length
// sequence, and a sequence longer than the oracle backward's 64-token recompute segment.
//
// Loss: L = <do, o> + <dht, ht>, whose gradient is what oracle_backward returns. Central
// differences with step 1e-5 have truncation error ~h^2 = 1e-10 (L is linear in q, v and h0,
// so there only rounding counts) and rounding error ~1e-16 |L| / h ~ 1e-11 relative. Measured
// worst over 25 fresh seeds: 1.2e-9 (dh0). So 1e-7 (rel RMS per gradient) is a tight bar with
// room for unlucky seeds; a deliberately wrong gradient (last tests) misses it by far.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gdn/reference.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn {
namespace {

using testing::ShapeCase;

constexpr double kStep = 1e-5;
constexpr double kBar = 1e-7;

double loss(const ref::Shape& shape, const ref::Inputs& in, const ref::Grads& gr) {
  ref::Shape s = shape;
  s.want_final_state = true;  // dht acts on the final state whether or not the caller keeps it
  const ref::FwdOutputs f = ref::oracle_forward(s, in);
  double L = 0;
  for (size_t i = 0; i < f.o.size(); ++i) L += gr.d_o[i] * f.o[i];
  for (size_t i = 0; i < gr.dht.size(); ++i) L += gr.dht[i] * f.ht[i];
  return L;
}

// Central differences of the loss with respect to every element of one input tensor.
std::vector<double> numeric_gradient(const ref::Shape& s, ref::Inputs in, const ref::Grads& gr,
                                     std::vector<double> ref::Inputs::*tensor) {
  std::vector<double>& x = in.*tensor;
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + kStep;
    const double up = loss(s, in, gr);
    x[i] = saved - kStep;
    const double down = loss(s, in, gr);
    x[i] = saved;
    grad[i] = (up - down) / (2 * kStep);
  }
  return grad;
}

struct GradientErrors {
  double dq, dk, dv, dbeta, dg, dh0;
};

// Relative RMS error of each analytic gradient against finite differences. h0 is perturbed
// as an explicit tensor (zeros when the case has none: the same function of the others).
GradientErrors fd_errors(const testing::RandomCase& c, const ref::BwdOutputs& analytic) {
  ref::Inputs in = c.inputs;
  if (in.h0.empty()) in.h0.assign(static_cast<size_t>(ref::state_elements(c.shape)), 0.0);
  const auto fd = [&](std::vector<double> ref::Inputs::*t) {
    return numeric_gradient(c.shape, in, c.grads, t);
  };
  return {ref::rel_rms(analytic.dq, fd(&ref::Inputs::q)),
          ref::rel_rms(analytic.dk, fd(&ref::Inputs::k)),
          ref::rel_rms(analytic.dv, fd(&ref::Inputs::v)),
          ref::rel_rms(analytic.dbeta, fd(&ref::Inputs::beta)),
          ref::rel_rms(analytic.dg, fd(&ref::Inputs::g)),
          ref::rel_rms(analytic.dh0, fd(&ref::Inputs::h0))};
}

bool all_within(const GradientErrors& e, double bar) {
  // Written so that a NaN error fails.
  return e.dq <= bar && e.dk <= bar && e.dv <= bar && e.dbeta <= bar && e.dg <= bar && e.dh0 <= bar;
}

std::vector<ShapeCase> fd_cases() {
  using L = ref::StateLayout;
  auto layout = [](ref::Shape s, L l, bool final_state = true) {
    s.layout = l;
    s.want_final_state = final_state;
    return s;
  };
  return {
      {"varlen_3_0_4_gva2_kv_dht", layout(testing::packed_shape({3, 0, 4}, 1, 2, 3, 2), L::KV), true, true},
      {"varlen_3_0_4_gva2_vk_nodht", layout(testing::packed_shape({3, 0, 4}, 1, 2, 3, 2), L::VK), true, false},
      {"B2_T3_gva2_vk_noh0_nofinal", layout(testing::dense_shape(2, 3, 2, 4, 2, 3), L::VK, false), false, true},
      {"T70_gva3_crosses_recompute_segment", layout(testing::packed_shape({70}, 1, 3, 2, 2), L::KV), true, true},
  };
}

testing::RandomCase make_case(const ShapeCase& sc, uint64_t seed) {
  testing::CaseOptions options;
  options.with_h0 = sc.with_h0;
  options.with_dht = sc.with_dht;
  return testing::make_random_case(sc.shape, seed, options);
}

class RefFiniteDifferences : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(RefFiniteDifferences, EveryGradientMatches) {
  const testing::RandomCase c = make_case(GetParam(), testing::test_seed());
  SCOPED_TRACE(testing::seed_note(c.seed) + " " + testing::describe(c.shape));
  const GradientErrors e = fd_errors(c, ref::oracle_backward(c.shape, c.inputs, c.grads));
  std::printf("[fd] %-40s dq %.1e dk %.1e dv %.1e dbeta %.1e dg %.1e dh0 %.1e\n",
              GetParam().name.c_str(), e.dq, e.dk, e.dv, e.dbeta, e.dg, e.dh0);
  EXPECT_LE(e.dq, kBar);
  EXPECT_LE(e.dk, kBar);
  EXPECT_LE(e.dv, kBar);
  EXPECT_LE(e.dbeta, kBar);
  EXPECT_LE(e.dg, kBar);
  EXPECT_LE(e.dh0, kBar);
}

INSTANTIATE_TEST_SUITE_P(Tiny, RefFiniteDifferences, ::testing::ValuesIn(fd_cases()),
                         [](const auto& info) { return info.param.name; });

// The check catches a wrong gradient: a small error in one element of any gradient, and a
// plausible formula slip (dg without the alpha factor), each fail the bar.
TEST(RefFiniteDifferencesCatches, APerturbedElementOfEachGradient) {
  const testing::RandomCase c = make_case(fd_cases()[0], testing::test_seed());
  SCOPED_TRACE(testing::seed_note(c.seed));
  const ref::BwdOutputs good = ref::oracle_backward(c.shape, c.inputs, c.grads);
  ASSERT_TRUE(all_within(fd_errors(c, good), kBar));
  for (std::vector<double> ref::BwdOutputs::*grad :
       {&ref::BwdOutputs::dq, &ref::BwdOutputs::dk, &ref::BwdOutputs::dv,
        &ref::BwdOutputs::dbeta, &ref::BwdOutputs::dg, &ref::BwdOutputs::dh0}) {
    ref::BwdOutputs bad = good;
    std::vector<double>& x = bad.*grad;
    double norm = 0;
    for (double v : x) norm += v * v;
    x[x.size() / 2] += 1e-5 * std::sqrt(norm);  // a 1e-5 relative error
    EXPECT_FALSE(all_within(fd_errors(c, bad), kBar));
  }
}

TEST(RefFiniteDifferencesCatches, DgWithoutTheDecayFactor) {
  const testing::RandomCase c = make_case(fd_cases()[3], testing::test_seed());
  SCOPED_TRACE(testing::seed_note(c.seed));
  ref::BwdOutputs bad = ref::oracle_backward(c.shape, c.inputs, c.grads);
  for (size_t i = 0; i < bad.dg.size(); ++i) bad.dg[i] /= std::exp(c.inputs.g[i]);
  EXPECT_GT(fd_errors(c, bad).dg, 1e-3);
}

}  // namespace
}  // namespace gdn
