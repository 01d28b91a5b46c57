// The reference rejects what is not a GDN problem, naming the argument in its message.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "gdn/reference.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"

namespace gdn {
namespace {

// Runs f, expects std::invalid_argument whose message contains every one of `words`.
void expect_rejected(const std::function<void()>& f, std::initializer_list<std::string> words) {
  try {
    f();
    ADD_FAILURE() << "expected std::invalid_argument mentioning " << *words.begin();
  } catch (const std::invalid_argument& e) {
    for (const std::string& w : words)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << "'" << w << "' not in: " << e.what();
  }
}

struct RefValidation : ::testing::Test {
  testing::RandomCase c = testing::make_random_case(testing::packed_shape({3, 5}, 1, 2, 4, 3), 1);
  void expect_shape_rejected(const ref::Shape& s, std::initializer_list<std::string> words) {
    expect_rejected([&] { ref::validate(s); }, words);
  }
};

TEST_F(RefValidation, ShapeRules) {
  ref::Shape s = c.shape;
  s.Hv = 3;
  s.Hk = 2;
  expect_shape_rejected(s, {"Hv", "multiple of Hk=2", "3"});
  s = c.shape;
  s.cu_seqlens = {1, 3, 8};
  expect_shape_rejected(s, {"cu_seqlens[0]", "got 1"});
  s.cu_seqlens = {0, 5, 3, 8};
  expect_shape_rejected(s, {"cu_seqlens[2]", "non-decreasing", "got 3"});
  s.cu_seqlens = {0, 3, 7};
  expect_shape_rejected(s, {"cu_seqlens[N]", "T=8", "got 7"});
  s.cu_seqlens = {0};
  expect_shape_rejected(s, {"cu_seqlens", "at least 2"});
  s = c.shape;
  s.B = 2;
  expect_shape_rejected(s, {"B", "1 when cu_seqlens is given"});
  s = testing::dense_shape(1, -1, 1, 1, 4, 4);
  expect_shape_rejected(s, {"T", ">= 0", "-1"});
  s = testing::dense_shape(0, 4, 1, 1, 4, 4);
  expect_shape_rejected(s, {"B", ">= 1"});
  s = testing::dense_shape(1, 4, 1, 1, 0, 4);
  expect_shape_rejected(s, {"K", ">= 1"});
  s = testing::dense_shape(1, 4, 1, 1, 4, 4);
  s.scale = std::nan("");
  expect_shape_rejected(s, {"scale", "finite"});
}

TEST_F(RefValidation, BufferSizes) {
  ref::Inputs in = c.inputs;
  in.q.pop_back();
  expect_rejected([&] { ref::oracle_forward(c.shape, in); }, {"q", "expected 32 elements", "got 31"});
  in = c.inputs;
  in.beta.push_back(0);
  expect_rejected([&] { ref::chunked_forward(c.shape, in); }, {"beta"});
  in = c.inputs;
  in.h0.resize(5);
  expect_rejected([&] { ref::oracle_forward(c.shape, in); }, {"h0", "empty or 48"});
  ref::Grads gr = c.grads;
  gr.d_o.clear();
  expect_rejected([&] { ref::oracle_backward(c.shape, c.inputs, gr); }, {"d_o"});
  gr = c.grads;
  gr.dht.resize(1);
  expect_rejected([&] { ref::chunked_backward(c.shape, c.inputs, gr); }, {"dht"});
  EXPECT_NO_THROW(ref::validate(c.shape, c.inputs, c.grads));
}

TEST_F(RefValidation, SequenceIndexOutOfRange) {
  expect_rejected([&] { (void)c.shape.seq_begin(2); }, {"sequence index", "[0, 2)"});
}

}  // namespace
}  // namespace gdn
