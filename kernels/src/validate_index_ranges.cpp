// Every tensor's byte size must fit in int64, so that no index computed from B, T, N and the
// head counts can wrap, in the library or in the caller's allocation. Checked with
// __builtin_mul_overflow: the product itself would already be undefined behaviour.
#include <initializer_list>

#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

namespace {

struct Factor {
  const char* name;
  int64_t value;
};

// Multiplies the factors; false when any partial product overflows int64.
bool checked_product(std::initializer_list<Factor> factors, int64_t* product) {
  int64_t acc = 1;
  for (const Factor& f : factors)
    if (__builtin_mul_overflow(acc, f.value, &acc)) return false;
  *product = acc;
  return true;
}

gdn_status check_tensor(std::string_view where, std::string_view tensor,
                        std::initializer_list<Factor> factors) {
  int64_t bytes = 0;
  if (checked_product(factors, &bytes)) return GDN_OK;
  std::string argument;
  std::string given;
  for (const Factor& f : factors) {
    if (std::string_view(f.name) == "bytes per element") continue;
    argument += argument.empty() ? "" : " * ";
    argument += cat("p->", f.name);
    given += given.empty() ? "" : ", ";
    given += cat(f.name, " = ", f.value);
  }
  return reject(GDN_ERROR_INVALID_ARGUMENT, where, argument,
                cat("sizes whose product times the element size (the bytes of ", tensor,
                    ") fits in int64"),
                cat(given, ", which overflows 64-bit indexing"));
}

int64_t element_bytes(gdn_dtype d) { return d == GDN_FP32 ? 4 : 2; }

}  // namespace

gdn_status validate_index_ranges(const gdn_problem& p, int64_t num_seqs, std::string_view where) {
  // The state holds one slot per sequence: num_seqs of them when packed, B otherwise.
  const Factor B{"B", p.B}, T{"T", p.T};
  const Factor N{p.cu_seqlens != nullptr ? "num_seqs" : "B", num_seqs};
  const Factor Hk{"Hk", p.Hk}, Hv{"Hv", p.Hv}, K{"K", p.K}, V{"V", p.V};
  const Factor qkv_bytes{"bytes per element", element_bytes(p.qkv_dtype)};
  const Factor fp32_bytes{"bytes per element", 4};
  if (gdn_status s = check_tensor(where, "q, k, dq, dk", {B, T, Hk, K, qkv_bytes}); s != GDN_OK)
    return s;
  if (gdn_status s = check_tensor(where, "v, o, dv, do", {B, T, Hv, V, qkv_bytes}); s != GDN_OK)
    return s;
  if (gdn_status s = check_tensor(where, "g, beta, dg, dbeta", {B, T, Hv, fp32_bytes});
      s != GDN_OK)
    return s;
  return check_tensor(where, "h0, ht, dht, dh0", {N, Hv, K, V, fp32_bytes});
}

}  // namespace gdn::detail
