// 16-bit float conversions for host buffers: bf16 and fp16 bit patterns (uint16_t) <-> float,
// rounding to nearest, ties to even, as the GPU's cvt.rn does. NaN stays NaN (quiet), and
// finite values beyond the range round to infinity as IEEE 754 says.
#pragma once

#include <cstdint>
#include <vector>

namespace gdn::testing {

uint16_t float_to_bf16(float x);
float bf16_to_float(uint16_t bits);
uint16_t float_to_fp16(float x);
float fp16_to_float(uint16_t bits);

// The 16-bit dtype of q, k, v, o and their gradients.
enum class HalfType { BF16, FP16 };

uint16_t float_to_half(float x, HalfType type);
float half_to_float(uint16_t bits, HalfType type);

// Round-trips a value through the dtype: the value a kernel actually sees.
inline double round_to_half(double x, HalfType type) {
  return half_to_float(float_to_half(static_cast<float>(x), type), type);
}
inline double round_to_float(double x) { return static_cast<double>(static_cast<float>(x)); }

// Whole-buffer conversions to float64 (what the comparison helpers take).
std::vector<double> to_double(const std::vector<uint16_t>& bits, HalfType type);
std::vector<double> to_double(const std::vector<float>& values);

}  // namespace gdn::testing
