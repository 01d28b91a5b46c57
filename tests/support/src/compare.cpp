#include "gdn/testing/compare.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gdn::testing {

void poison(std::vector<uint16_t>& buffer) { std::fill(buffer.begin(), buffer.end(), kPoisonHalf); }

void poison(std::vector<float>& buffer) {
  std::fill(buffer.begin(), buffer.end(), std::bit_cast<float>(kPoisonFloatBits));
}

int64_t count_poisoned(const std::vector<uint16_t>& buffer) {
  return std::count(buffer.begin(), buffer.end(), kPoisonHalf);
}

int64_t count_poisoned(const std::vector<float>& buffer) {
  // Compare bit patterns: the poison is a NaN, so == on floats would never match.
  int64_t n = 0;
  for (float x : buffer) n += std::bit_cast<uint32_t>(x) == kPoisonFloatBits;
  return n;
}

int64_t count_nan(const std::vector<double>& values) {
  int64_t n = 0;
  for (double x : values) n += std::isnan(x);
  return n;
}

bool OutputCheck::passed() const { return nan_count == 0 && poisoned == 0 && rel_rms <= bound; }

std::string OutputCheck::describe() const {
  char line[256];
  std::snprintf(line, sizeof line, "%s: rel_rms %.3e %s %.1e (%lld NaN, %lld poisoned, %lld elements) %s",
                name.c_str(), rel_rms, rel_rms <= bound ? "<=" : "NOT <=", bound,
                static_cast<long long>(nan_count), static_cast<long long>(poisoned),
                static_cast<long long>(elements), passed() ? "ok" : "FAIL");
  return line;
}

OutputCheck check_output(const std::string& name, const std::vector<double>& got,
                         const std::vector<double>& ref, double bound) {
  if (got.size() != ref.size())
    throw std::invalid_argument("gdn::testing::check_output: " + name + ": expected " +
                                std::to_string(ref.size()) + " elements (the reference's), got " +
                                std::to_string(got.size()));
  OutputCheck c;
  c.name = name;
  c.elements = static_cast<int64_t>(got.size());
  c.rel_rms = ref::rel_rms(got, ref);
  c.bound = bound;
  c.nan_count = count_nan(got);
  return c;
}

OutputCheck check_output(const std::string& name, const std::vector<uint16_t>& got,
                         HalfType type, const std::vector<double>& ref, double bound) {
  OutputCheck c = check_output(name, to_double(got, type), ref, bound);
  c.poisoned = count_poisoned(got);
  return c;
}

OutputCheck check_output(const std::string& name, const std::vector<float>& got,
                         const std::vector<double>& ref, double bound) {
  OutputCheck c = check_output(name, to_double(got), ref, bound);
  c.poisoned = count_poisoned(got);
  return c;
}

bool CheckReport::passed() const {
  for (const OutputCheck& c : outputs)
    if (!c.passed()) return false;
  return !outputs.empty();
}

std::string CheckReport::summary() const {
  std::string s;
  for (const OutputCheck& c : outputs) s += c.describe() + "\n";
  return s;
}

const OutputCheck& CheckReport::at(const std::string& name) const {
  for (const OutputCheck& c : outputs)
    if (c.name == name) return c;
  throw std::out_of_range("gdn::testing::CheckReport::at: no output named '" + name + "'");
}

CheckReport check_forward(const RandomCase& c, const ref::FwdOutputs& ref,
                          const DeviceFwdResult& got, const Tolerances& tol) {
  CheckReport r;
  r.outputs.push_back(check_output("o", got.o, c.options.dtype, ref.o, tol.o));
  if (c.shape.want_final_state) r.outputs.push_back(check_output("ht", got.ht, ref.ht, tol.ht));
  return r;
}

CheckReport check_backward(const RandomCase& c, const ref::BwdOutputs& ref,
                           const DeviceBwdResult& got, const Tolerances& tol) {
  const HalfType t = c.options.dtype;
  CheckReport r;
  r.outputs.push_back(check_output("dq", got.dq, t, ref.dq, tol.dq));
  r.outputs.push_back(check_output("dk", got.dk, t, ref.dk, tol.dk));
  r.outputs.push_back(check_output("dv", got.dv, t, ref.dv, tol.dv));
  r.outputs.push_back(check_output("dg", got.dg, ref.dg, tol.dg));
  r.outputs.push_back(check_output("dbeta", got.dbeta, ref.dbeta, tol.dbeta));
  if (!got.dh0.empty()) r.outputs.push_back(check_output("dh0", got.dh0, ref.dh0, tol.dh0));
  return r;
}

}  // namespace gdn::testing
