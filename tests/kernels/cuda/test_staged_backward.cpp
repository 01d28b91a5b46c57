// GPU backward correctness of every registered backward variant against the float64 oracle
// (docs/spec.md section 4): edge set in full (dht and dh0 on and off), anchor sample on whole GVA
// groups (so dq, dk sums are complete), and T = 32768 for two head configurations on head
// slices. Outputs are poisoned before each run; reruns must be bit-identical (no atomics).
#include <gtest/gtest.h>

#include <cstdio>
#include <future>

#include "device_harness.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/shapes.hpp"
#include "slice_check.hpp"

namespace gdn::testing::gpu {
namespace {

class StagedBackward : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
    variants_ = variants_of(Pass::Backward);
    ASSERT_FALSE(variants_.empty()) << "no backward variant registered";
  }
  std::vector<const Variant*> variants_;
};

template <class Check>
void run_every_variant(const std::vector<const Variant*>& variants, const DeviceCase& dc,
                       const RunOptions& opt, const std::string& label, Check check,
                       bool print_time = false) {
  for (const Variant* v : variants) {
    SCOPED_TRACE(v->name() + " on " + label);
    const Implementable imp = v->can_implement(dc.problem);
    ASSERT_TRUE(imp.ok) << imp.reason;
    const BwdRun first = run_backward(*v, dc, opt);
    ASSERT_EQ(first.status, GDN_OK);
    check(first.out);
    const BwdRun second = run_backward(*v, dc, opt);
    ASSERT_EQ(second.status, GDN_OK);
    EXPECT_TRUE(same_bits(first.out, second.out)) << "rerun differs: not deterministic";
    if (print_time) std::printf("  %s %s: %.3f ms\n", label.c_str(), v->name().c_str(), second.elapsed_ms);
  }
}

TEST_F(StagedBackward, EdgeSetMatchesOracle) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  WorstErrors worst;
  const std::vector<ShapeCase> shapes = edge_cases(128, 128);
  std::vector<std::future<std::pair<RandomCase, ref::BwdOutputs>>> jobs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    CaseOptions opt;
    opt.with_h0 = shapes[i].with_h0;
    opt.with_dht = shapes[i].with_dht;
    opt.dtype = i % 5 == 4 ? HalfType::FP16 : HalfType::BF16;
    jobs.push_back(std::async(std::launch::async, [&shapes, i, seed, opt] {
      RandomCase c = make_random_case(shapes[i].shape, derive_seed(seed, i), opt);
      ref::BwdOutputs r = ref::oracle_backward(c.shape, c.inputs, c.grads);
      return std::make_pair(std::move(c), std::move(r));
    }));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto [c, r] = jobs[i].get();
    const std::string label = shapes[i].name + " (" + describe(c.shape) + ")";
    const DeviceCase dc(c, i % 2 == 1);
    RunOptions opt;
    opt.want_dh0 = i % 3 != 2;  // dh0 optional: skipped on every third case
    run_every_variant(variants_, dc, opt, label, [&](const DeviceBwdResult& got) {
      const CheckReport rep = check_backward(c, r, got);
      EXPECT_TRUE(rep.passed()) << rep.summary();
      worst.note(rep);
    });
  }
  worst.print("EdgeSetMatchesOracle");
}

TEST_F(StagedBackward, AnchorSampleMatchesOracleOnGroups) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  WorstErrors worst;
  const std::vector<ShapeCase> shapes = anchor_sample_cases(128, 128);
  struct Prepared {
    RandomCase c;
    std::vector<SlicedReference> refs;
  };
  std::vector<std::future<Prepared>> jobs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    CaseOptions opt;
    opt.with_h0 = shapes[i].with_h0;
    opt.with_dht = shapes[i].with_dht;
    opt.with_reference = false;
    jobs.push_back(std::async(std::launch::async, [&shapes, i, seed, opt] {
      Prepared p{make_random_case(shapes[i].shape, derive_seed(seed, i), opt), {}};
      p.refs = backward_references(p.c, {whole_group(p.c.shape, 0)});
      return p;
    }));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Prepared p = jobs[i].get();
    const DeviceCase dc(p.c, i % 2 == 0);
    run_every_variant(variants_, dc, {}, shapes[i].name, [&](const DeviceBwdResult& got) {
      for (const SlicedReference& r : p.refs) {
        const CheckReport rep = check_backward_slice(p.c, r, got);
        EXPECT_TRUE(rep.passed()) << rep.summary();
        worst.note(rep);
      }
    });
  }
  worst.print("AnchorSampleMatchesOracleOnGroups");
}

// T = 32768: Hk = Hv = 16 (a one-head slice is a whole group, so dq and dk are compared too)
// and Hk = 2, Hv = 8 (per-value-head outputs dv, dg, dbeta, dh0 on the strong-decay head).
TEST_F(StagedBackward, Long32768MatchesOracleOnHeadSlices) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  WorstErrors worst;
  std::vector<ShapeCase> shapes;
  for (const ShapeCase& s : long_cases(128, 128))
    if ((s.shape.Hk == 16 && s.shape.Hv == 16) || (s.shape.Hk == 2 && s.shape.Hv == 8))
      shapes.push_back(s);
  ASSERT_EQ(shapes.size(), 2u);
  struct Prepared {
    RandomCase c;
    std::vector<SlicedReference> refs;
  };
  std::vector<std::future<Prepared>> jobs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    CaseOptions opt;
    opt.with_reference = false;
    jobs.push_back(std::async(std::launch::async, [&shapes, i, seed, opt] {
      Prepared p{make_random_case(shapes[i].shape, derive_seed(seed, i), opt), {}};
      p.refs = backward_references(p.c, {single_head(p.c.shape, p.c.shape.Hv - 1)});
      return p;
    }));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Prepared p = jobs[i].get();
    const DeviceCase dc(p.c, true);
    run_every_variant(variants_, dc, {}, shapes[i].name, [&](const DeviceBwdResult& got) {
      for (const SlicedReference& r : p.refs) {
        const CheckReport rep = check_backward_slice(p.c, r, got);
        EXPECT_TRUE(rep.passed()) << rep.summary();
        worst.note(rep);
      }
    }, true);
  }
  worst.print("Long32768MatchesOracleOnHeadSlices");
}

}  // namespace
}  // namespace gdn::testing::gpu
