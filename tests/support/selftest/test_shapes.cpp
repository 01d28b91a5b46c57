// The shared shape lists cover what docs/spec.md section 4 asks for, and each is a valid problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gdn/testing/shapes.hpp"

namespace gdn::testing {
namespace {

bool has_zero_length_sequence(const ref::Shape& s) {
  for (int64_t n = 0; n < s.num_seqs(); ++n)
    if (s.seq_begin(n) == s.seq_end(n)) return true;
  return false;
}

TEST(SupportShapes, EdgeCasesCoverTheStandard) {
  const auto cases = edge_cases(16, 32);
  std::set<int64_t> dense_T, seq_lengths;
  std::set<int> ratios;
  bool b_gt_1 = false, zero_len = false, vk = false, kv = false, no_h0 = false, no_final = false,
       no_dht = false, ragged7 = false, ragged2 = false;
  for (const ShapeCase& c : cases) {
    const ref::Shape& s = c.shape;
    EXPECT_NO_THROW(ref::validate(s)) << c.name;
    EXPECT_EQ(s.K, 16);
    EXPECT_EQ(s.V, 32);
    if (s.cu_seqlens.empty()) dense_T.insert(s.T);
    for (int64_t n = 0; n < s.num_seqs(); ++n) seq_lengths.insert(s.seq_end(n) - s.seq_begin(n));
    ratios.insert(s.Hv / s.Hk);
    b_gt_1 |= s.B > 1;
    zero_len |= has_zero_length_sequence(s);
    vk |= s.layout == ref::StateLayout::VK;
    kv |= s.layout == ref::StateLayout::KV;
    no_h0 |= !c.with_h0;
    no_dht |= !c.with_dht;
    no_final |= !s.want_final_state;
    ragged7 |= s.cu_seqlens == std::vector<int64_t>{0, 410, 841, 1135, 2126, 2512, 4096};
    ragged2 |= s.cu_seqlens == std::vector<int64_t>{0, 47, 128};
  }
  for (int64_t T : {1, 63, 65, 1000}) EXPECT_TRUE(dense_T.count(T)) << "T=" << T;
  for (int64_t L : {0, 1, 64}) EXPECT_TRUE(seq_lengths.count(L)) << "length " << L;
  for (int r : {1, 2, 3, 4, 6, 8}) EXPECT_TRUE(ratios.count(r)) << "Hv/Hk=" << r;
  EXPECT_TRUE(b_gt_1 && zero_len && vk && kv && no_h0 && no_dht && no_final && ragged7 && ragged2);
}

TEST(SupportShapes, AnchorSampleAndLongCasesAreValidAt128) {
  for (const ShapeCase& c : anchor_sample_cases(128, 128)) EXPECT_NO_THROW(ref::validate(c.shape)) << c.name;
  const auto longs = long_cases(128, 128);
  EXPECT_EQ(longs.size(), anchor_head_configs().size());
  for (const ShapeCase& c : longs) {
    EXPECT_NO_THROW(ref::validate(c.shape)) << c.name;
    EXPECT_EQ(c.shape.T, 32768);
    EXPECT_EQ(c.shape.num_seqs(), 1);
  }
}

TEST(SupportShapes, DescribeNamesTheLayout) {
  ref::Shape s = packed_shape({47, 81}, 2, 4, 16, 32);
  s.layout = ref::StateLayout::VK;
  EXPECT_EQ(describe(s), "B=1 T=128 N=2 [0,47,128] Hk=2 Hv=4 K=16 V=32 VK final");
}

}  // namespace
}  // namespace gdn::testing
