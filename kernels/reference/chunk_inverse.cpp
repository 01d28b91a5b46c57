// The gate-free inverse A0 = (I + N)^-1 of docs/spec.md section 2, N = StrictLower(diag(beta) K K^T).
#include <stdexcept>
#include <string>

#include "gdn/reference_chunk.hpp"

namespace gdn::ref::chunk {

namespace {

void require_square_at_most(const Mat& N, int64_t limit, const char* fn) {
  if (N.rows != N.cols || N.rows > limit)
    throw std::invalid_argument(std::string("gdn::ref::chunk::") + fn +
                                ": N: expected a square matrix of at most " +
                                std::to_string(limit) + " rows, got " + std::to_string(N.rows) +
                                "x" + std::to_string(N.cols));
}

// X = (I + N)^-1 restricted to rows/cols [o, o + n) of the padded matrix, by forward
// substitution: X[i,i] = 1, X[i,j] = -sum_{m=j}^{i-1} N[i,m] X[m,j] (i > j).
void substitute_block(const Mat& N, Mat& X, int64_t o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    X(o + i, o + i) = 1;
    for (int64_t j = 0; j < i; ++j) {
      double acc = 0;
      for (int64_t m = j; m < i; ++m) acc += N(o + i, o + m) * X(o + m, o + j);
      X(o + i, o + j) = -acc;
    }
  }
}

// Given X holding the inverses A^-1 (rows/cols [o, o+h)) and B^-1 ([o+h, o+2h)) of the two
// diagonal blocks of the 2h x 2h block at o, fills its lower-left block:
//   X21 = -B^-1 C A^-1 with C = N[o+h.., o..o+h) (the lower-left block of I + N).
void merge_blocks(const Mat& N, Mat& X, int64_t o, int64_t h) {
  Mat C_Ainv(h, h);  // C A^-1
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double acc = 0;
      for (int64_t m = j; m < h; ++m) acc += N(o + h + i, o + m) * X(o + m, o + j);
      C_Ainv(i, j) = acc;
    }
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double acc = 0;
      for (int64_t m = 0; m <= i; ++m) acc += X(o + h + i, o + h + m) * C_Ainv(m, j);
      X(o + h + i, o + j) = -acc;
    }
}

}  // namespace

Mat strict_lower_beta_kkt(const Mat& K, const std::vector<double>& beta) {
  if (static_cast<int64_t>(beta.size()) != K.rows)
    throw std::invalid_argument("gdn::ref::chunk::strict_lower_beta_kkt: beta: expected " +
                                std::to_string(K.rows) + " values (rows of K), got " +
                                std::to_string(beta.size()));
  Mat N(K.rows, K.rows);
  for (int64_t r = 0; r < K.rows; ++r)
    for (int64_t s = 0; s < r; ++s) {
      double dot = 0;
      for (int64_t i = 0; i < K.cols; ++i) dot += K(r, i) * K(s, i);
      N(r, s) = beta[static_cast<size_t>(r)] * dot;
    }
  return N;
}

Mat invert_unit_lower_blocked(const Mat& N) {
  require_square_at_most(N, kChunk, "invert_unit_lower_blocked");
  // Pad to kChunk: padded rows of N are zero, so (I + N) is block diagonal with an identity
  // block there and the top-left L x L block of the inverse is exactly A0.
  Mat Np(kChunk, kChunk);
  for (int64_t r = 0; r < N.rows; ++r)
    for (int64_t c = 0; c < N.cols; ++c) Np(r, c) = N(r, c);
  Mat X(kChunk, kChunk);
  for (int64_t o = 0; o < kChunk; o += kInvBlock) substitute_block(Np, X, o, kInvBlock);
  for (int64_t h = kInvBlock; h < kChunk; h *= 2)  // 16 -> 32 -> 64
    for (int64_t o = 0; o < kChunk; o += 2 * h) merge_blocks(Np, X, o, h);
  Mat A0(N.rows, N.rows);
  for (int64_t r = 0; r < N.rows; ++r)
    for (int64_t c = 0; c <= r; ++c) A0(r, c) = X(r, c);
  return A0;
}

Mat invert_unit_lower_substitution(const Mat& N) {
  require_square_at_most(N, N.rows, "invert_unit_lower_substitution");
  Mat X(N.rows, N.rows);
  substitute_block(N, X, 0, N.rows);
  return X;
}

}  // namespace gdn::ref::chunk
