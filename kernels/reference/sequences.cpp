// Shape: sequence boundaries, scale, and the validation every entry point runs first.
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "gdn/reference.hpp"

namespace gdn::ref {

namespace {

[[noreturn]] void reject(const std::string& argument, const std::string& expected,
                         const std::string& given) {
  throw std::invalid_argument("gdn::ref: " + argument + ": expected " + expected + ", got " +
                              given);
}

template <typename T>
std::string str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void check_size(const std::string& name, size_t given, int64_t expected) {
  if (static_cast<int64_t>(given) != expected)
    reject(name, str(expected) + " elements", str(given) + " elements");
}

void check_optional_state(const std::string& name, size_t given, const Shape& s) {
  if (given != 0 && static_cast<int64_t>(given) != state_elements(s))
    reject(name, "empty or " + str(state_elements(s)) + " elements ([N=" + str(s.num_seqs()) +
                     ", Hv, K, V])",
           str(given) + " elements");
}

void validate_shape(const Shape& s) {
  if (s.B < 1) reject("B", ">= 1", str(s.B));
  if (s.T < 0) reject("T", ">= 0", str(s.T));
  if (s.Hk < 1) reject("Hk", ">= 1", str(s.Hk));
  if (s.Hv < 1) reject("Hv", ">= 1", str(s.Hv));
  if (s.Hv % s.Hk != 0)
    reject("Hv", "a multiple of Hk=" + str(s.Hk), str(s.Hv));
  if (s.K < 1) reject("K", ">= 1", str(s.K));
  if (s.V < 1) reject("V", ">= 1", str(s.V));
  if (!std::isfinite(s.scale)) reject("scale", "a finite value (0 = K^-0.5)", str(s.scale));
  if (s.cu_seqlens.empty()) return;
  const auto& cu = s.cu_seqlens;
  if (s.B != 1) reject("B", "1 when cu_seqlens is given", str(s.B));
  if (cu.size() < 2) reject("cu_seqlens", "at least 2 entries (N+1, N >= 1)", str(cu.size()) + " entries");
  if (cu.front() != 0) reject("cu_seqlens[0]", "0", str(cu.front()));
  for (size_t i = 1; i < cu.size(); ++i)
    if (cu[i] < cu[i - 1])
      reject("cu_seqlens[" + str(i) + "]", "non-decreasing (>= " + str(cu[i - 1]) + ")",
             str(cu[i]));
  if (cu.back() != s.T) reject("cu_seqlens[N]", "T=" + str(s.T), str(cu.back()));
}

}  // namespace

int64_t Shape::num_seqs() const {
  return cu_seqlens.empty() ? B : static_cast<int64_t>(cu_seqlens.size()) - 1;
}

int64_t Shape::seq_begin(int64_t n) const {
  if (n < 0 || n >= num_seqs()) reject("sequence index", "in [0, " + str(num_seqs()) + ")", str(n));
  return cu_seqlens.empty() ? n * T : cu_seqlens[static_cast<size_t>(n)];
}

int64_t Shape::seq_end(int64_t n) const {
  if (n < 0 || n >= num_seqs()) reject("sequence index", "in [0, " + str(num_seqs()) + ")", str(n));
  return cu_seqlens.empty() ? (n + 1) * T : cu_seqlens[static_cast<size_t>(n) + 1];
}

double Shape::effective_scale() const { return scale != 0 ? scale : 1.0 / std::sqrt(double(K)); }

int64_t state_elements(const Shape& s) {
  return s.num_seqs() * s.Hv * static_cast<int64_t>(s.K) * s.V;
}

void validate(const Shape& s) { validate_shape(s); }

void validate(const Shape& s, const Inputs& in) {
  validate_shape(s);
  const int64_t tokens = s.B * s.T;
  check_size("q", in.q.size(), tokens * s.Hk * s.K);
  check_size("k", in.k.size(), tokens * s.Hk * s.K);
  check_size("v", in.v.size(), tokens * s.Hv * s.V);
  check_size("g", in.g.size(), tokens * s.Hv);
  check_size("beta", in.beta.size(), tokens * s.Hv);
  check_optional_state("h0", in.h0.size(), s);
}

void validate(const Shape& s, const Inputs& in, const Grads& gr) {
  validate(s, in);
  check_size("d_o", gr.d_o.size(), s.B * s.T * s.Hv * s.V);
  check_optional_state("dht", gr.dht.size(), s);
}

}  // namespace gdn::ref
