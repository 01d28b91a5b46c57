#include "gdn/testing/half.hpp"

#include <bit>
#include <cmath>

namespace gdn::testing {

uint16_t float_to_bf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep the sign, force the quiet bit
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Round to nearest even on the 16 dropped bits; a carry into the exponent is correct
  // (including the step from the largest finite value to infinity).
  const uint32_t lsb = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7fffu + lsb) >> 16);
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_fp16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 (halfway past 65504): infinity
  if (a < 0x38800000u) {
    // Below 2^-14: fp16 subnormal, value = m * 2^-24. |x| * 2^24 is exact in double and
    // nearbyint rounds half to even; m == 1024 is the smallest normal, encoded the same way.
    const double m = std::nearbyint(static_cast<double>(std::fabs(x)) * 16777216.0);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
  }
  const uint32_t exponent = (a >> 23) - 127 + 15;
  const uint32_t mantissa = a & 0x7fffffu;
  uint32_t h = (exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carry into the exponent is right
  return static_cast<uint16_t>(sign | h);
}

float fp16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: m * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float x, HalfType type) {
  return type == HalfType::BF16 ? float_to_bf16(x) : float_to_fp16(x);
}

float half_to_float(uint16_t bits, HalfType type) {
  return type == HalfType::BF16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

std::vector<double> to_double(const std::vector<uint16_t>& bits, HalfType type) {
  std::vector<double> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) out[i] = half_to_float(bits[i], type);
  return out;
}

std::vector<double> to_double(const std::vector<float>& values) {
  return {values.begin(), values.end()};
}

}  // namespace gdn::testing
