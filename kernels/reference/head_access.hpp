// Private helpers of the reference: moving one (sequence, head)'s rows between the flat
// token-major tensors of reference.hpp and the small dense matrices of reference_chunk.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gdn/reference.hpp"
#include "gdn/reference_chunk.hpp"

namespace gdn::ref::detail {

using chunk::Mat;

// Rows [t0, t0 + L) of head `head` of a [tokens, heads, dim] tensor, as an L x dim matrix.
Mat gather_rows(const std::vector<double>& x, int64_t t0, int64_t L, int heads, int head,
                int dim);
// Writes (or adds) the rows of m back to tokens [t0, t0 + m.rows) of head `head`.
void scatter_rows(std::vector<double>& x, int64_t t0, int heads, int head, const Mat& m);
void scatter_add_rows(std::vector<double>& x, int64_t t0, int heads, int head, const Mat& m);

// The same for per-token scalars [tokens, heads].
std::vector<double> gather_scalars(const std::vector<double>& x, int64_t t0, int64_t L,
                                   int heads, int head);
void scatter_scalars(std::vector<double>& x, int64_t t0, int heads, int head,
                     const std::vector<double>& values);

// State of sequence n, value head h as a K x V matrix whatever s.layout is; an empty
// tensor reads as zeros.
Mat load_state(const std::vector<double>& states, const Shape& s, int64_t n, int h);
// Writes S (K x V) into a full state tensor in s.layout.
void store_state(std::vector<double>& states, const Shape& s, int64_t n, int h, const Mat& S);

// Rows [t0, t0 + L) of value head h (with its k-head's q and k) as one chunk's inputs.
chunk::ChunkIn gather_chunk(const Shape& s, const Inputs& in, int64_t t0, int64_t L, int h);

// Every backward output of shape s, zero-filled (the backwards add into them per head).
BwdOutputs zero_backward_outputs(const Shape& s);

// k-head that serves value head h (GVA: Hv / Hk value heads share one k-head).
inline int k_head_of(const Shape& s, int h) { return h / (s.Hv / s.Hk); }

}  // namespace gdn::ref::detail
