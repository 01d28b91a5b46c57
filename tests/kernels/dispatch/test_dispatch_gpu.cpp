// On a device: gdn_fwd_variant_name and gdn_fwd_dispatch_source report exactly the decision
// decide_variant makes over the table compiled into this libgdn (none in a default build: the
// default rule), for several shapes. Skipped without a device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "candidates.hpp"
#include "table_dispatch.hpp"
#include "validation.hpp"

namespace {

gdn_problem batched(int64_t B, int64_t T) {
  gdn_problem p;
  gdn_problem_init(&p, B, T, 2, 8, 128, 128);
  return p;
}

TEST(DispatchSource, PublicAnswersEqualTheDecision) {
  if (!gdn_device_available()) GTEST_SKIP() << "skipped: no CUDA device";
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  for (const gdn_problem& p :
       {batched(1, 64), batched(2, 256), batched(4, 8192), batched(1, 65536)}) {
    gdn::detail::ProblemFacts facts;
    ASSERT_EQ(gdn::detail::validate_problem(&p, "test", &facts), GDN_OK);
    const auto c = gdn::detail::find_candidates(gdn::Pass::Forward, p, gdn::registry());
    ASSERT_FALSE(c.implementable.empty()) << c.rejections;
    gdn::detail::SelectionInput in;
    in.num_seqs = facts.num_seqs;
    in.longest = facts.longest;
    in.Hv = p.Hv;
    in.V = p.V;
    in.sm_count = sms;
    const gdn::detail::DispatchDecision d =
        gdn::detail::decide_variant(gdn::detail::compiled_dispatch_table(),
                                    gdn::detail::dispatch_shape(gdn::Pass::Forward, p, facts),
                                    c.implementable, gdn::registry(), in);
    const char* name = gdn_fwd_variant_name(&p);
    ASSERT_NE(name, nullptr) << gdn_last_error();
    EXPECT_EQ(d.variant->name(), name);
    const char* source = gdn_fwd_dispatch_source(&p);
    ASSERT_NE(source, nullptr) << gdn_last_error();
    EXPECT_EQ(d.source, source);
  }
}

}  // namespace
