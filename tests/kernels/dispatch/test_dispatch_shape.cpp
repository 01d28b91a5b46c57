// The lookup key libgdn builds from a problem: host-side facts only (kernels/src/
// table_dispatch.cpp, dispatch_shape). No device.
#include <gtest/gtest.h>

#include <cstdint>

#include "table_dispatch.hpp"
#include "validation.hpp"

namespace {

namespace dispatch = gdn::dispatch;

dispatch::Shape shape_of(const gdn_problem& p, gdn::Pass pass = gdn::Pass::Forward) {
  gdn::detail::ProblemFacts facts;
  EXPECT_EQ(gdn::detail::validate_problem(&p, "test", &facts), GDN_OK);
  return gdn::detail::dispatch_shape(pass, p, facts);
}

// Three packed sequences 0 + 100 + 156 (T = 256); the host copy is attached by the tests.
struct Packed {
  int32_t offsets[4] = {0, 0, 100, 256};
  gdn_problem p;
  Packed() {
    gdn_problem_init(&p, 1, 256, 2, 8, 128, 128);
    p.cu_seqlens = reinterpret_cast<const void*>(0x10000);  // never dereferenced
    p.cu_seqlens_dtype = GDN_INT32;
    p.num_seqs = 3;
  }
};

TEST(DispatchShape, BatchedProblemKnowsEverything) {
  gdn_problem p;
  gdn_problem_init(&p, 4, 300, 2, 8, 128, 128);
  p.qkv_dtype = GDN_FP16;
  p.beta_dtype = GDN_FP16;
  const dispatch::Shape s = shape_of(p);
  EXPECT_EQ(s.pass, dispatch::Pass::Forward);
  EXPECT_EQ(s.h_qk, 2);
  EXPECT_EQ(s.h_v, 8);
  EXPECT_EQ(s.k, 128);
  EXPECT_EQ(s.v, 128);
  EXPECT_EQ(s.dtype, dispatch::DType::FP16);
  EXPECT_EQ(s.num_seqs, 4);
  EXPECT_EQ(s.total_tokens, 1200);
  EXPECT_EQ(s.max_seqlen, 300);
}

TEST(DispatchShape, PackedWithHostOffsetsUsesTheLongestSequence) {
  Packed packed;
  packed.p.cu_seqlens_host = packed.offsets;
  const dispatch::Shape s = shape_of(packed.p);
  EXPECT_EQ(s.num_seqs, 3);
  EXPECT_EQ(s.total_tokens, 256);
  EXPECT_EQ(s.max_seqlen, 156);
}

TEST(DispatchShape, PackedWithOnlyAHintUsesTheHint) {
  Packed packed;
  packed.p.max_seqlen_hint = 200;
  EXPECT_EQ(shape_of(packed.p).max_seqlen, 200);
}

// T is only an upper bound here: the key leaves the longest sequence unknown rather than
// guessing, and never reads cu_seqlens from the device.
TEST(DispatchShape, PackedWithoutHostOffsetsOrHintLeavesTheLongestUnknown) {
  Packed packed;
  const dispatch::Shape s = shape_of(packed.p);
  EXPECT_EQ(s.max_seqlen, 0);
  EXPECT_EQ(dispatch::bucket_of(s).max_seqlen_bucket, dispatch::kUnknownBucket);
}

TEST(DispatchShape, BackwardPassIsKeyedAsBackward) {
  gdn_problem p;
  gdn_problem_init(&p, 1, 64, 1, 1, 128, 128);
  EXPECT_EQ(shape_of(p, gdn::Pass::Backward).pass, dispatch::Pass::Backward);
}

}  // namespace
