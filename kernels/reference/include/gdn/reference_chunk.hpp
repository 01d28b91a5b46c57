// Building blocks of the chunked reference (docs/spec.md section 2), one chunk of one
// (sequence, value head) at a time, in float64. Exposed so that tests (and GPU kernel tests
// of the individual stages, such as the A0 inverse) can check each piece on its own.
//
// Names follow docs/spec.md: within a chunk of L <= 64 rows, gamma = chunk-local cumsum of g,
// Gam[r,s] = exp(gamma_r - gamma_s) (r >= s), N = StrictLower(diag(beta) K K^T),
// A0 = (I + N)^-1, Ag = (Gam o A0) diag(beta), W' = V - diag(exp gamma) K S,
// V_new = Ag W'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gdn::ref::chunk {

inline constexpr int kChunk = 64;      // rows per chunk
inline constexpr int kInvBlock = 16;   // diagonal block of the A0 inverse

// Dense row-major float64 matrix; small, value semantics.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> a;

  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), a(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t r, int64_t c) { return a[static_cast<size_t>(r * cols + c)]; }
  double operator()(int64_t r, int64_t c) const { return a[static_cast<size_t>(r * cols + c)]; }
};

Mat matmul(const Mat& x, const Mat& y);     // x y
Mat matmul_tn(const Mat& x, const Mat& y);  // x^T y
Mat matmul_nt(const Mat& x, const Mat& y);  // x y^T
Mat transpose(const Mat& x);
void add_scaled(Mat& acc, const Mat& x, double alpha);  // acc += alpha x (same shape)
double row_dot(const Mat& x, const Mat& y, int64_t r);   // row r of x . row r of y

// N = StrictLower(diag(beta) K K^T), L x L.
Mat strict_lower_beta_kkt(const Mat& K, const std::vector<double>& beta);

// A0 = (I + N)^-1 for strictly lower N (L <= 64), the way the kernels do it: pad to 64,
// invert the four 16x16 diagonal blocks by forward substitution, merge 16 -> 32 -> 64 with
//   [[A, 0], [C, B]]^-1 = [[A^-1, 0], [-B^-1 C A^-1, B^-1]].
Mat invert_unit_lower_blocked(const Mat& N);
// The same by plain forward substitution over all L rows (the check for the blocked one).
Mat invert_unit_lower_substitution(const Mat& N);

// One chunk's inputs: L rows of one (sequence, value head); Q and K are that head's k-head.
struct ChunkIn {
  Mat Q, K, V;                    // L x K, L x K, L x V
  std::vector<double> g, beta;    // L
};

// Everything gate- and inverse-related that the forward and the backward both need.
struct ChunkPrep {
  int64_t L = 0;
  std::vector<double> gamma;   // chunk-local cumsum of g
  std::vector<double> e;       // exp(gamma_r)
  std::vector<double> f;       // exp(gamma_{L-1} - gamma_r)
  double eL = 1;               // exp(gamma_{L-1})
  Mat Gam;                     // exp(gamma_r - gamma_s) for r >= s, else 0
  Mat N, A0, Ag;               // as in the header comment
};
ChunkPrep prepare_chunk(const ChunkIn& in);

struct ChunkFwd {
  Mat O;       // L x V
  Mat S_next;  // K x V
};
// S: the state at the chunk start (K x V).
ChunkFwd chunk_forward(const ChunkIn& in, const Mat& S, double scale);

struct ChunkBwd {
  Mat dQ, dK, dV;                // per value head (not yet reduced over the GVA group)
  std::vector<double> dg, dbeta;
  Mat dS;                        // gradient with respect to the chunk's start state
};
// dO: L x V; dS_next: gradient with respect to the chunk's end state (K x V).
ChunkBwd chunk_backward(const ChunkIn& in, const Mat& S, const Mat& dO, const Mat& dS_next,
                        double scale);

}  // namespace gdn::ref::chunk
