// GPU forward correctness of every registered forward variant against the float64 oracle
// (gdn.md section 4): edge set in full, anchor sample and T = 32768 per head configuration on
// head slices. Every output buffer is poisoned before each run; each case is run twice and
// must give bit-identical outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <future>

#include "device_harness.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/shapes.hpp"
#include "slice_check.hpp"

namespace gdn::testing::gpu {
namespace {

class StagedForward : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
    variants_ = variants_of(Pass::Forward);
    ASSERT_FALSE(variants_.empty()) << "no forward variant registered";
  }
  std::vector<const Variant*> variants_;
};

// Runs every variant twice on the case and hands each first run to `check`.
template <class Check>
void run_every_variant(const std::vector<const Variant*>& variants, const RandomCase& c,
                       const DeviceCase& dc, const std::string& label, Check check,
                       bool print_time = false) {
  for (const Variant* v : variants) {
    SCOPED_TRACE(v->name() + " on " + label);
    const Implementable imp = v->can_implement(dc.problem);
    ASSERT_TRUE(imp.ok) << imp.reason;
    const FwdRun first = run_forward(*v, dc);
    ASSERT_EQ(first.status, GDN_OK);
    check(first.out);
    const FwdRun second = run_forward(*v, dc);
    ASSERT_EQ(second.status, GDN_OK);
    EXPECT_TRUE(same_bits(first.out, second.out)) << "rerun differs: not deterministic";
    if (print_time) std::printf("  %s %s: %.3f ms\n", label.c_str(), v->name().c_str(), second.elapsed_ms);
  }
}

TEST_F(StagedForward, EdgeSetMatchesOracle) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  WorstErrors worst;
  const std::vector<ShapeCase> shapes = edge_cases(128, 128);
  std::vector<std::future<std::pair<RandomCase, ref::FwdOutputs>>> jobs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    CaseOptions opt = CaseOptions::forward(shapes[i].with_h0);
    opt.dtype = i % 5 == 4 ? HalfType::FP16 : HalfType::BF16;  // fp16 on a few cases
    jobs.push_back(std::async(std::launch::async, [&shapes, i, seed, opt] {
      RandomCase c = make_random_case(shapes[i].shape, derive_seed(seed, i), opt);
      ref::FwdOutputs r = ref::oracle_forward(c.shape, c.inputs);
      return std::make_pair(std::move(c), std::move(r));
    }));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto [c, r] = jobs[i].get();
    const std::string label = shapes[i].name + " (" + describe(c.shape) + ")";
    const DeviceCase dc(c, i % 2 == 1);
    run_every_variant(variants_, c, dc, label, [&](const DeviceFwdResult& got) {
      const CheckReport rep = check_forward(c, r, got);
      EXPECT_TRUE(rep.passed()) << rep.summary();
      worst.note(rep);
    });
  }
  worst.print("EdgeSetMatchesOracle");
}

TEST_F(StagedForward, AnchorSampleMatchesOracleOnHeadSlices) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  WorstErrors worst;
  const std::vector<ShapeCase> shapes = anchor_sample_cases(128, 128);
  for (size_t i = 0; i < shapes.size(); ++i) {
    CaseOptions opt = CaseOptions::forward(shapes[i].with_h0);
    opt.with_reference = false;
    const RandomCase c = make_random_case(shapes[i].shape, derive_seed(seed, i), opt);
    const std::vector<SlicedReference> refs = forward_references(
        c, {whole_group(c.shape, 0), whole_group(c.shape, c.shape.Hk - 1)});
    const DeviceCase dc(c, i % 2 == 0);
    run_every_variant(variants_, c, dc, shapes[i].name, [&](const DeviceFwdResult& got) {
      for (const SlicedReference& r : refs) {
        const CheckReport rep = check_forward_slice(c, r, got);
        EXPECT_TRUE(rep.passed()) << rep.summary();
        worst.note(rep);
      }
    });
  }
  worst.print("AnchorSampleMatchesOracleOnHeadSlices");
}

// T = 32768 once per anchor head configuration; compared on the no-decay head 0 and the
// strong-decay last head (A = 16), whose float64 references run in parallel.
TEST_F(StagedForward, Long32768PerHeadConfigMatchesOracleOnHeadSlices) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  WorstErrors worst;
  const std::vector<ShapeCase> shapes = long_cases(128, 128);
  CaseOptions opt;
  opt.with_dht = false;
  opt.with_reference = false;
  // Generating the inputs is the slow part on the host: build the cases in parallel, with
  // the references of their two head slices.
  struct Prepared {
    RandomCase c;
    std::vector<SlicedReference> refs;
  };
  std::vector<std::future<Prepared>> jobs;
  for (size_t i = 0; i < shapes.size(); ++i)
    jobs.push_back(std::async(std::launch::async, [&shapes, i, seed, opt] {
      Prepared p{make_random_case(shapes[i].shape, derive_seed(seed, i), opt), {}};
      p.refs = forward_references(p.c, {single_head(p.c.shape, 0), single_head(p.c.shape, p.c.shape.Hv - 1)});
      return p;
    }));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Prepared p = jobs[i].get();
    const DeviceCase dc(p.c, i % 2 == 0);
    run_every_variant(variants_, p.c, dc, shapes[i].name, [&](const DeviceFwdResult& got) {
      for (const SlicedReference& r : p.refs) {
        const CheckReport rep = check_forward_slice(p.c, r, got);
        EXPECT_TRUE(rep.passed()) << rep.summary();
        worst.note(rep);
      }
    }, true);
  }
  worst.print("Long32768PerHeadConfigMatchesOracleOnHeadSlices");
}

}  // namespace
}  // namespace gdn::testing::gpu
