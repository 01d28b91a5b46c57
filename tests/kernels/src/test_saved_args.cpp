// Training mode's arguments (gdn_saved, kernels/src/saved_api.cpp and validate_args.cpp):
// gdn_saved_size without a device, gdn_saved_init's refusals, and the rules on a->save and
// a->saved, each with the argument its message names.
#include <cstring>
#include <initializer_list>
#include <string>

#include "api_test_support.hpp"
#include "gdn/gdn.h"

namespace {

using gdn::api_test::fails_with;
using gdn::api_test::fake_device_pointer;
using gdn::api_test::valid_batched_problem;
using gdn::api_test::valid_bwd_args;
using gdn::api_test::valid_fwd_args;

// A saved block at a slot of its own, past every tensor of the argument helpers (the blocks
// here are under 6 MB, the slots 4 MB apart).
gdn_saved saved_block(const gdn_problem& p, int segment_chunks) {
  gdn_saved s{};
  s.data = fake_device_pointer(120);
  s.bytes = gdn_saved_size(&p, segment_chunks);
  s.segment_chunks = segment_chunks;
  return s;
}

// 2 x 256 tokens, 8 value heads, 8 chunks: the prepare outputs (g's sums 16 KB, two layouts of
// T 512 KB each, gates 48 KB), then per segment [M | N] 1 MB and the start 512 KB per head.
TEST(SavedSize, GrowsWithShorterSegmentsAndNeedsNoDevice) {
  const gdn_problem p = valid_batched_problem();
  const size_t none = gdn_saved_size(&p, 0);
  EXPECT_EQ(none, 16384u + 2 * 524288u + 49152u);
  const size_t s16 = gdn_saved_size(&p, 16);  // one segment per sequence: 2 (+ 1 spare)
  EXPECT_EQ(s16, none + 256 + 256 + 3 * 8 * (131072u + 65536u));
  EXPECT_GT(gdn_saved_size(&p, 4), s16);  // 2 + 2 segments (+ 2 spare)
}

TEST(SavedSize, RejectsALengthNoChunkLoopRuns) {
  const gdn_problem p = valid_batched_problem();
  EXPECT_EQ(gdn_saved_size(&p, 24), 0u);
  EXPECT_TRUE(fails_with(GDN_ERROR_INVALID_ARGUMENT, GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_saved_size", "segment_chunks", "power of two in [4, 256]", "got 24"}));
  gdn_problem bad = p;
  bad.Hv = 7;
  EXPECT_EQ(gdn_saved_size(&bad, 0), 0u);
  EXPECT_TRUE(fails_with(GDN_ERROR_INVALID_ARGUMENT, GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_saved_size", "p->Hv", "got 7"}));
}

TEST(SavedInit, RejectsNullAndAnInvalidProblemBeforeTheDevice) {
  const gdn_problem p = valid_batched_problem();
  EXPECT_TRUE(fails_with(gdn_saved_init(&p, nullptr), GDN_ERROR_INVALID_ARGUMENT,
                         {"gdn_saved_init", "s:", "gdn_saved", "NULL"}));
  gdn_problem bad = p;
  bad.K = 96;
  gdn_saved s{};
  EXPECT_NE(gdn_saved_init(&bad, &s), GDN_OK);
  EXPECT_NE(std::string(gdn_last_error()).find("gdn_saved_init"), std::string::npos);
}

TEST(SavedInit, NeedsADeviceForTheBackwardsSegments) {
  if (gdn_device_available()) GTEST_SKIP() << "skipped: a device is present (the GPU tests cover it)";
  const gdn_problem p = valid_batched_problem();
  gdn_saved s{};
  EXPECT_TRUE(fails_with(gdn_saved_init(&p, &s), GDN_ERROR_NOT_AVAILABLE, {"gdn_saved_init"}));
}

TEST(SavedArgs, AcceptsABlockOfTheSizeForItsSegments) {
  const gdn_problem p = valid_batched_problem();
  for (const int segment : {0, 16}) {
    const gdn_saved s = saved_block(p, segment);
    gdn_fwd_args fwd = valid_fwd_args();
    fwd.save = &s;
    EXPECT_EQ(gdn_validate_fwd(&p, &fwd), GDN_OK) << gdn_last_error();
    gdn_bwd_args bwd = valid_bwd_args();
    bwd.saved = &s;
    EXPECT_EQ(gdn_validate_bwd(&p, &bwd), GDN_OK) << gdn_last_error();
  }
}

// A broken block refused by the forward's check (as a->save) and the backward's (as a->saved),
// each message naming the argument of its call, what was expected and what was given.
void expect_refused(const gdn_problem& p, const gdn_saved& s, const std::string& field,
                    std::initializer_list<std::string> fragments) {
  gdn_fwd_args fwd = valid_fwd_args();
  fwd.save = &s;
  gdn_bwd_args bwd = valid_bwd_args();
  bwd.saved = &s;
  const char* const arguments[] = {"a->save->", "a->saved->"};
  const char* const calls[] = {"gdn_validate_fwd", "gdn_validate_bwd"};
  for (int call = 0; call < 2; ++call) {
    const gdn_status st = call == 0 ? gdn_validate_fwd(&p, &fwd) : gdn_validate_bwd(&p, &bwd);
    EXPECT_TRUE(fails_with(st, GDN_ERROR_INVALID_ARGUMENT, {calls[call], arguments[call] + field}));
    const std::string message = gdn_last_error();
    for (const std::string& f : fragments)
      EXPECT_NE(message.find(f), std::string::npos) << "lacks '" << f << "': " << message;
  }
}

TEST(SavedArgs, RejectsABlockTooSmallForItsSegments) {
  const gdn_problem p = valid_batched_problem();
  gdn_saved s = saved_block(p, 0);
  s.segment_chunks = 16;  // the size of a block without segments
  expect_refused(p, s, "bytes", {"16-chunk segments", "gdn_saved_init", std::to_string(s.bytes) + " bytes"});
}

TEST(SavedArgs, RejectsASegmentLengthNoChunkLoopRuns) {
  const gdn_problem p = valid_batched_problem();
  gdn_saved s = saved_block(p, 16);
  s.segment_chunks = 12;
  expect_refused(p, s, "segment_chunks", {"power of two in [4, 256]", "got 12"});
}

TEST(SavedArgs, RejectsNullDataWhenThereAreTokens) {
  const gdn_problem p = valid_batched_problem();
  gdn_saved s = saved_block(p, 0);
  s.data = nullptr;
  expect_refused(p, s, "data", {"512 tokens", "got NULL"});
}

TEST(SavedArgs, RejectsAMisalignedBlock) {
  const gdn_problem p = valid_batched_problem();
  gdn_saved s = saved_block(p, 0);
  s.data = static_cast<char*>(s.data) + 8;
  expect_refused(p, s, "data", {"16-byte aligned", "the saved block", "8 bytes past"});
}

// The forward writes the block: it may share memory with no tensor of the call. The backward
// reads it: its outputs may not overlap it.
TEST(SavedArgs, RejectsABlockSharingMemoryWithAnOutputOrAnInput) {
  const gdn_problem p = valid_batched_problem();
  gdn_saved s = saved_block(p, 0);
  gdn_fwd_args fwd = valid_fwd_args();
  s.data = const_cast<void*>(fwd.q);
  fwd.save = &s;
  EXPECT_TRUE(fails_with(gdn_validate_fwd(&p, &fwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"a->save->data", "memory of its own", "a->q"}));
  gdn_bwd_args bwd = valid_bwd_args();
  s.data = bwd.dv;
  bwd.saved = &s;
  EXPECT_TRUE(fails_with(gdn_validate_bwd(&p, &bwd), GDN_ERROR_INVALID_ARGUMENT,
                         {"a->dv", "a->saved->data"}));
  s.data = const_cast<void*>(bwd.q);  // an input beside another input: allowed
  EXPECT_EQ(gdn_validate_bwd(&p, &bwd), GDN_OK) << gdn_last_error();
}

}  // namespace
