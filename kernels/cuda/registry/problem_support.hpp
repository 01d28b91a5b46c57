// The problem properties every kernel family of this build requires (head dims, dtypes),
// checked on the host by each variant's can_implement after its own config rules.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "gdn/variant.hpp"

namespace gdn {

inline const char* dtype_name(gdn_dtype t) {
  switch (t) {
    case GDN_BF16: return "bf16";
    case GDN_FP16: return "fp16";
    case GDN_FP32: return "fp32";
  }
  return "unknown";
}

// family: the name used in the reason, e.g. "staged" or "fused".
inline Implementable check_problem_support(const gdn_problem& p, const char* family) {
  if (p.K != 128 || p.V != 128) {
    std::ostringstream s;
    s << "K, V: the " << family << " kernels need K = V = 128, got K = " << p.K
      << ", V = " << p.V;
    return {false, s.str()};
  }
  // The prepare kernel addresses a chunk's 64 rows of q and k (Hk K elements apart) with 32-bit
  // offsets: 64 Hk K must stay below 2^31.
  constexpr int64_t kMaxRowOffsets = int64_t(1) << 31;
  if (int64_t(p.Hk) * p.K * 64 >= kMaxRowOffsets) {
    std::ostringstream s;
    s << "Hk: the " << family << " kernels need 64 * Hk * K below 2^31 (Hk below "
      << kMaxRowOffsets / (64 * int64_t(p.K)) << " at K = " << p.K << "), got Hk = " << p.Hk;
    return {false, s.str()};
  }
  if (p.qkv_dtype != GDN_BF16 && p.qkv_dtype != GDN_FP16)
    return {false, std::string("qkv_dtype: expected bf16 or fp16, got ") + dtype_name(p.qkv_dtype)};
  if (p.beta_dtype != GDN_FP32 && p.beta_dtype != p.qkv_dtype)
    return {false, std::string("beta_dtype: expected fp32 or the qkv dtype (") +
                       dtype_name(p.qkv_dtype) + "), got " + dtype_name(p.beta_dtype)};
  return {true, ""};
}

}  // namespace gdn
