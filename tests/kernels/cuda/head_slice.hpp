// Comparing a slice of value heads when the float64 reference of the whole problem is too
// slow (anchor shapes, T = 32768): heads are independent chains, so the reference of the
// sub-problem (one k head and value heads [h_begin, h_begin + count) of its group) equals the
// matching slice of the full problem. dq and dk sum over the whole group: compare them only
// when the slice covers it (covers_group).
#pragma once

#include <cstdint>
#include <vector>

#include "gdn/reference.hpp"
#include "gdn/testing/random_case.hpp"

namespace gdn::testing::gpu {

struct HeadSlice {
  int k_head;
  int v_begin;  // first value head (inside the group of k_head)
  int v_count;
  bool covers_group(const ref::Shape& s) const { return v_count == s.Hv / s.Hk; }
};

HeadSlice whole_group(const ref::Shape& s, int k_head);
HeadSlice single_head(const ref::Shape& s, int v_head);

// Shape, inputs and gradients of the sub-problem, from the case's host buffers.
ref::Shape slice_shape(const ref::Shape& s, const HeadSlice& h);
ref::Inputs slice_inputs(const RandomCase& c, const HeadSlice& h);
ref::Grads slice_grads(const RandomCase& c, const HeadSlice& h);

// Picks heads [begin, begin + count) out of a [outer, heads, inner] tensor.
template <class T>
std::vector<T> slice_heads(const std::vector<T>& full, int64_t outer, int heads, int64_t inner,
                           int begin, int count) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(outer * count * inner));
  for (int64_t o = 0; o < outer; ++o) {
    const auto first = full.begin() + (o * heads + begin) * inner;
    out.insert(out.end(), first, first + count * inner);
  }
  return out;
}

}  // namespace gdn::testing::gpu
