// The staged variants are safe to capture in a CUDA graph (no host synchronisation, no
// host copies inside a call): a captured forward/backward, replayed, gives the same bits as
// a direct run.
#include <gtest/gtest.h>

#include <cstring>

#include "device_harness.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn::testing::gpu {
namespace {

// Captures `launch(stream)` into a graph on a fresh stream, replays it once and waits.
template <class Launch>
void capture_and_replay(Launch launch) {
  cudaStream_t stream{};
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  const gdn_status status = launch(reinterpret_cast<gdn_stream_t>(stream));
  cudaGraph_t graph{};
  check_cuda(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  ASSERT_EQ(status, GDN_OK);
  cudaGraphExec_t exec{};
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  check_cuda(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

RandomCase ragged_case(uint64_t seed) {
  const ref::Shape s = packed_shape({0, 47, 130, 0, 64}, 2, 4, 128, 128);
  CaseOptions opt;
  opt.with_reference = false;
  return make_random_case(s, seed, opt);
}

TEST(StagedGraph, ForwardReplayMatchesDirectRun) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const RandomCase c = ragged_case(seed);
  const DeviceCase dc(c, false);
  for (const Variant* v : variants_of(Pass::Forward)) {
    SCOPED_TRACE(v->name());
    const FwdRun direct = run_forward(*v, dc);
    ASSERT_EQ(direct.status, GDN_OK);
    const FwdOutputs out(dc);
    DeviceBuffer ws(v->workspace_bytes(dc.problem));
    const gdn_fwd_args a = fwd_args(dc, out, ws);
    capture_and_replay([&](gdn_stream_t s) { return v->run_fwd(dc.problem, a, s); });
    EXPECT_EQ(out.o.download<uint16_t>(), direct.out.o);
    const std::vector<float> ht_graph = out.ht.download<float>();
    ASSERT_EQ(ht_graph.size(), direct.out.ht.size());
    EXPECT_EQ(std::memcmp(ht_graph.data(), direct.out.ht.data(), ht_graph.size() * 4), 0);
  }
}

TEST(StagedGraph, BackwardReplayMatchesDirectRun) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  const RandomCase c = ragged_case(seed);
  const DeviceCase dc(c, true);
  for (const Variant* v : variants_of(Pass::Backward)) {
    SCOPED_TRACE(v->name());
    const BwdRun direct = run_backward(*v, dc);
    ASSERT_EQ(direct.status, GDN_OK);
    const BwdOutputs out(dc, /*want_dh0=*/true);
    DeviceBuffer ws(v->workspace_bytes(dc.problem));
    const gdn_bwd_args a = bwd_args(dc, out, ws);
    capture_and_replay([&](gdn_stream_t s) { return v->run_bwd(dc.problem, a, s); });
    EXPECT_EQ(out.dq.download<uint16_t>(), direct.out.dq);
    EXPECT_EQ(out.dk.download<uint16_t>(), direct.out.dk);
    EXPECT_EQ(out.dv.download<uint16_t>(), direct.out.dv);
    auto same = [](const DeviceBuffer& b, const std::vector<float>& want) {
      const std::vector<float> got = b.download<float>();
      return got.size() == want.size() &&
             (got.empty() || std::memcmp(got.data(), want.data(), got.size() * 4) == 0);
    };
    EXPECT_TRUE(same(out.dg, direct.out.dg));
    EXPECT_TRUE(same(out.dbeta, direct.out.dbeta));
    EXPECT_TRUE(same(out.dh0, direct.out.dh0));
  }
}

}  // namespace
}  // namespace gdn::testing::gpu
