// Validation of a gdn_problem alone: sizes, head counts, head dims, dtypes, layout, scale.
// Sequence structure and index ranges are checked in their own files.
#include <cmath>

#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

namespace {

constexpr int32_t kSupportedHeadDim = 128;  // the only K = V the kernels implement (docs/spec.md)

const char* dtype_name(int d) {
  switch (d) {
    case GDN_BF16: return "GDN_BF16";
    case GDN_FP16: return "GDN_FP16";
    case GDN_FP32: return "GDN_FP32";
  }
  return "out of range";
}

std::string dtype_text(int d) { return cat(d, " (", dtype_name(d), ")"); }

bool is_known_dtype(int d) { return d == GDN_BF16 || d == GDN_FP16 || d == GDN_FP32; }

gdn_status check_sizes(const gdn_problem& p, std::string_view where) {
  if (p.B < 0) return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->B", "B >= 0", cat(p.B));
  if (p.T < 0) return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->T", "T >= 0", cat(p.T));
  if (p.Hk <= 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->Hk", "a positive number of q/k heads",
                  cat(p.Hk));
  if (p.Hv <= 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->Hv", "a positive number of v heads",
                  cat(p.Hv));
  if (p.Hv % p.Hk != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->Hv",
                  cat("a multiple of p->Hk = ", p.Hk, " (each q/k head serves Hv/Hk v heads)"),
                  cat(p.Hv));
  return GDN_OK;
}

gdn_status check_head_dims(const gdn_problem& p, std::string_view where) {
  if (p.K <= 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->K", "a positive key head dim", cat(p.K));
  if (p.V <= 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->V", "a positive value head dim",
                  cat(p.V));
  if (p.K != kSupportedHeadDim)
    return reject(GDN_ERROR_UNSUPPORTED, where, "p->K",
                  cat("key head dim ", kSupportedHeadDim, " (the only one with kernels)"),
                  cat(p.K));
  if (p.V != kSupportedHeadDim)
    return reject(GDN_ERROR_UNSUPPORTED, where, "p->V",
                  cat("value head dim ", kSupportedHeadDim, " (the only one with kernels)"),
                  cat(p.V));
  return GDN_OK;
}

gdn_status check_dtypes(const gdn_problem& p, std::string_view where) {
  const int qkv = static_cast<int>(p.qkv_dtype);
  const int beta = static_cast<int>(p.beta_dtype);
  if (!is_known_dtype(qkv))
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->qkv_dtype",
                  "a gdn_dtype value (GDN_BF16 = 0, GDN_FP16 = 1, GDN_FP32 = 2)", cat(qkv));
  if (qkv != GDN_BF16 && qkv != GDN_FP16)
    return reject(GDN_ERROR_UNSUPPORTED, where, "p->qkv_dtype", "GDN_BF16 or GDN_FP16",
                  dtype_text(qkv));
  if (!is_known_dtype(beta))
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->beta_dtype",
                  "a gdn_dtype value (GDN_BF16 = 0, GDN_FP16 = 1, GDN_FP32 = 2)", cat(beta));
  if (beta != GDN_FP32 && beta != qkv)
    return reject(GDN_ERROR_UNSUPPORTED, where, "p->beta_dtype",
                  cat("GDN_FP32 or the qkv dtype ", dtype_name(qkv)), dtype_text(beta));
  return GDN_OK;
}

gdn_status check_layout_and_scale(const gdn_problem& p, std::string_view where) {
  const int layout = static_cast<int>(p.state_layout);
  if (layout != GDN_STATE_KV && layout != GDN_STATE_VK)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->state_layout",
                  "GDN_STATE_KV (0) or GDN_STATE_VK (1)", cat(layout));
  if (!std::isfinite(p.scale))
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->scale",
                  "a finite float (usually K^-0.5)", cat(p.scale));
  return GDN_OK;
}

}  // namespace

gdn_status validate_problem(const gdn_problem* p, std::string_view where, ProblemFacts* facts) {
  if (p == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p", "a pointer to a gdn_problem", "NULL");
  if (gdn_status s = check_sizes(*p, where); s != GDN_OK) return s;
  if (gdn_status s = check_head_dims(*p, where); s != GDN_OK) return s;
  if (gdn_status s = check_dtypes(*p, where); s != GDN_OK) return s;
  if (gdn_status s = check_layout_and_scale(*p, where); s != GDN_OK) return s;
  ProblemFacts local;
  ProblemFacts& f = facts != nullptr ? *facts : local;
  if (gdn_status s = validate_sequences(*p, where, &f); s != GDN_OK) return s;
  if (gdn_status s = validate_index_ranges(*p, f.num_seqs, where); s != GDN_OK) return s;
  f.tokens = p->B * p->T;  // cannot overflow: validate_index_ranges checked it
  return GDN_OK;
}

}  // namespace gdn::detail
