// Comparing kernel outputs with the float64 reference (docs/spec.md section 4): relative RMS error
// per output against its bar, NaN never passes, and every element of a poisoned output
// buffer must have been overwritten.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gdn/reference.hpp"
#include "gdn/testing/half.hpp"
#include "gdn/testing/random_case.hpp"

namespace gdn::testing {

// Poison: all-ones bit patterns, a NaN in bf16, fp16 and fp32 alike, which no correct kernel
// writes. Fill outputs with it before a run; count_poisoned afterwards must be 0.
inline constexpr uint16_t kPoisonHalf = 0xFFFF;
inline constexpr uint32_t kPoisonFloatBits = 0xFFFFFFFFu;

void poison(std::vector<uint16_t>& buffer);
void poison(std::vector<float>& buffer);
int64_t count_poisoned(const std::vector<uint16_t>& buffer);
int64_t count_poisoned(const std::vector<float>& buffer);
int64_t count_nan(const std::vector<double>& values);

// The bars of docs/spec.md section 4 for bf16 inputs.
struct Tolerances {
  double o = 5e-3, ht = 5e-3;
  double dq = 8e-3, dk = 8e-3, dv = 8e-3, dh0 = 8e-3;
  double dbeta = 2e-2, dg = 2e-2;
};

struct OutputCheck {
  std::string name;
  int64_t elements = 0;
  double rel_rms = 0;      // ref::rel_rms(got, ref): NaN if any NaN, inf if ref is 0 and got not
  double bound = 0;
  int64_t nan_count = 0;   // NaN elements in got (poison included)
  int64_t poisoned = 0;    // elements still holding the poison pattern
  bool passed() const;     // no NaN, nothing poisoned, rel_rms <= bound
  std::string describe() const;  // "dq: rel_rms 1.2e-03 <= 8.0e-03 (0 NaN, 0 poisoned, 4096 elements) ok"
};

// Throws std::invalid_argument naming the output when the sizes differ.
OutputCheck check_output(const std::string& name, const std::vector<double>& got,
                         const std::vector<double>& ref, double bound);
OutputCheck check_output(const std::string& name, const std::vector<uint16_t>& got,
                         HalfType type, const std::vector<double>& ref, double bound);
OutputCheck check_output(const std::string& name, const std::vector<float>& got,
                         const std::vector<double>& ref, double bound);

struct CheckReport {
  std::vector<OutputCheck> outputs;
  bool passed() const;
  std::string summary() const;  // one line per output
  const OutputCheck& at(const std::string& name) const;  // throws std::out_of_range
};

// Device results as copied back to the host (sizes as in gdn.h).
struct DeviceFwdResult {
  std::vector<uint16_t> o;  // case dtype
  std::vector<float> ht;    // empty when the shape asks for no final state
};
struct DeviceBwdResult {
  std::vector<uint16_t> dq, dk, dv;   // case dtype
  std::vector<float> dg, dbeta, dh0;  // dbeta in fp32 (beta_dtype fp32); dh0 empty: skipped
};

CheckReport check_forward(const RandomCase& c, const ref::FwdOutputs& ref,
                          const DeviceFwdResult& got, const Tolerances& tol = {});
CheckReport check_backward(const RandomCase& c, const ref::BwdOutputs& ref,
                           const DeviceBwdResult& got, const Tolerances& tol = {});

}  // namespace gdn::testing
