// CPU float64 reference of Gated DeltaNet: the token-loop oracle and the chunked form
// (chunk 64, gate-free inverse), forward and backward. Every kernel test compares against it.
//
// Tensors are flat std::vector<double> in the layouts of gdn.h (token-major):
//   q, k  [B*T, Hk, K]      v, o, do, dv  [B*T, Hv, V]      g, beta, dg, dbeta  [B*T, Hv]
//   h0, ht, dht, dh0  [N, Hv, K, V]  or [N, Hv, V, K] when layout == StateLayout::VK
// An empty h0 / dht means zeros; ht is filled only when want_final_state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gdn::ref {

enum class StateLayout { KV, VK };

struct Shape {
  int64_t B = 1;
  int64_t T = 0;                    // tokens per batch row (total when packed)
  std::vector<int64_t> cu_seqlens;  // empty: B sequences of length T; else B == 1, N+1 entries
  int Hk = 1, Hv = 1, K = 128, V = 128;
  double scale = 0;                 // 0 means K^-0.5
  StateLayout layout = StateLayout::KV;
  bool want_final_state = true;

  int64_t num_seqs() const;
  // [start, end) token range of sequence n (global token index, over B*T).
  int64_t seq_begin(int64_t n) const;
  int64_t seq_end(int64_t n) const;
  double effective_scale() const;
};

struct Inputs {
  std::vector<double> q, k, v, g, beta, h0;
};

struct FwdOutputs {
  std::vector<double> o, ht;
};

struct Grads {
  std::vector<double> d_o, dht;  // dht empty = zero
};

struct BwdOutputs {
  std::vector<double> dq, dk, dv, dg, dbeta, dh0;
};

// Throws std::invalid_argument naming the argument, what was expected and what was given,
// for a shape that is not a GDN problem or buffers whose sizes do not match it. Every
// entry point below calls it first; tests call it to check their own cases.
void validate(const Shape& s);  // the shape alone
void validate(const Shape& s, const Inputs& in);
void validate(const Shape& s, const Inputs& in, const Grads& gr);

// Number of elements of one full state tensor [N, Hv, K, V] (either layout).
int64_t state_elements(const Shape& s);

// How to run the reference. Work is split over (sequence, k-head) groups, each on one thread
// in a fixed order, so the result is bit-identical for every thread count. At K = V = 128 the
// oracle forward costs ~8 K V flops per token and value head (a T = 32768, Hv = 64 case is
// ~3e11; measured ~3 GFLOP/s per thread here, backward 5-10x the forward): GPU tests on long
// shapes want threads = 0, and chunked_backward (about twice as fast as oracle_backward).
struct RunOptions {
  int threads = 1;  // 0: std::thread::hardware_concurrency()
};

// The backward always produces dh0 (the gradient with respect to a zero start state when h0
// is empty), as gdn_bwd writes it whenever its dh0 pointer is set.
FwdOutputs oracle_forward(const Shape& s, const Inputs& in, const RunOptions& run = {});
BwdOutputs oracle_backward(const Shape& s, const Inputs& in, const Grads& gr,
                           const RunOptions& run = {});
FwdOutputs chunked_forward(const Shape& s, const Inputs& in, const RunOptions& run = {});
BwdOutputs chunked_backward(const Shape& s, const Inputs& in, const Grads& gr,
                            const RunOptions& run = {});

// ||x - ref|| / ||ref|| (0 when both are zero; +inf when ref is zero and x is not;
// NaN in x gives NaN).
double rel_rms(const std::vector<double>& x, const std::vector<double>& ref);

}  // namespace gdn::ref
