// RunOptions::threads splits the work over (sequence, k-head) groups; results must be
// bit-identical whatever the thread count (GPU tests compare against them and rely on it).
#include <gtest/gtest.h>

#include "gdn/reference.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn {
namespace {

TEST(RefThreads, ResultsAreBitIdenticalForEveryThreadCount) {
  const testing::RandomCase c =
      testing::make_random_case(testing::packed_shape({70, 0, 130, 5}, 3, 6, 8, 8), testing::test_seed());
  SCOPED_TRACE(testing::seed_note(c.seed));
  const ref::FwdOutputs of = ref::oracle_forward(c.shape, c.inputs);
  const ref::FwdOutputs cf = ref::chunked_forward(c.shape, c.inputs);
  const ref::BwdOutputs ob = ref::oracle_backward(c.shape, c.inputs, c.grads);
  const ref::BwdOutputs cb = ref::chunked_backward(c.shape, c.inputs, c.grads);
  for (int threads : {0, 2, 5, 64}) {
    const ref::RunOptions run{threads};
    EXPECT_EQ(ref::oracle_forward(c.shape, c.inputs, run).o, of.o) << threads;
    EXPECT_EQ(ref::chunked_forward(c.shape, c.inputs, run).ht, cf.ht) << threads;
    const ref::BwdOutputs o = ref::oracle_backward(c.shape, c.inputs, c.grads, run);
    const ref::BwdOutputs k = ref::chunked_backward(c.shape, c.inputs, c.grads, run);
    EXPECT_EQ(o.dq, ob.dq) << threads;
    EXPECT_EQ(o.dh0, ob.dh0) << threads;
    EXPECT_EQ(k.dk, cb.dk) << threads;
    EXPECT_EQ(k.dg, cb.dg) << threads;
  }
}

TEST(RefThreads, NegativeThreadCountIsRejected) {
  const testing::RandomCase c = testing::make_random_case(testing::dense_shape(1, 3, 1, 1, 4, 4), 1);
  EXPECT_THROW(ref::oracle_forward(c.shape, c.inputs, ref::RunOptions{-1}), std::invalid_argument);
}

}  // namespace
}  // namespace gdn
