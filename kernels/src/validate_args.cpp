// Pointer rules of gdn_fwd_args / gdn_bwd_args. Token tensors are required whenever the
// problem has tokens (an empty problem may pass NULL, as frameworks do for empty tensors);
// states are optional by design (NULL h0 = zero start, NULL ht = no final state).
#include <cstdint>
#include <initializer_list>
#include <string>

#include "gdn/launch_plan.hpp"
#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

namespace {

const char* dtype_word(gdn_dtype d) {
  switch (d) {
    case GDN_BF16: return "bf16";
    case GDN_FP16: return "fp16";
    case GDN_FP32: return "fp32";
  }
  return "?";
}

struct Required {
  const char* argument;  // e.g. "a->q"
  const void* pointer;
  std::string tensor;    // shape and dtype the pointer must hold
};

gdn_status check_required(std::string_view where, const ProblemFacts& f,
                          std::initializer_list<Required> required) {
  if (f.tokens == 0) return GDN_OK;
  for (const Required& r : required)
    if (r.pointer == nullptr)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, r.argument,
                    cat("a device pointer to ", r.tensor, " (", f.tokens, " tokens)"), "NULL");
  return GDN_OK;
}

// The token tensors the forward kernels read and write in 16-byte vectors (q, k, v: TMA boxes
// and cp.async rows; o: 16-byte stores) must start on a 16-byte boundary; rows are 256 bytes,
// so every row then does.
gdn_status check_aligned_16(std::string_view where, const ProblemFacts& f,
                            std::initializer_list<Required> tensors) {
  if (f.tokens == 0) return GDN_OK;
  for (const Required& r : tensors)
    if (reinterpret_cast<std::uintptr_t>(r.pointer) % 16 != 0)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, r.argument,
                    cat("a 16-byte aligned device pointer to ", r.tensor),
                    cat("an address ", reinterpret_cast<std::uintptr_t>(r.pointer) % 16,
                        " bytes past a 16-byte boundary"));
  return GDN_OK;
}

gdn_status check_workspace_pair(std::string_view where, const char* argument,
                                const void* workspace, size_t bytes) {
  if (workspace == nullptr && bytes != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, argument,
                  "0 when the workspace pointer is NULL (NULL lets the library allocate)",
                  cat(bytes, " bytes with a NULL workspace"));
  return GDN_OK;
}

struct TensorTexts {
  std::string qk, v, gate, beta;
};

TensorTexts tensor_texts(const gdn_problem& p) {
  const char* qkv = dtype_word(p.qkv_dtype);
  return {cat("[B, T, Hk, K] ", qkv), cat("[B, T, Hv, V] ", qkv), "[B, T, Hv] fp32",
          cat("[B, T, Hv] ", dtype_word(p.beta_dtype))};
}

// The plan pins (a->launch): optional; each field GDN_PLAN_RULE or a value it takes
// (gdn/launch_plan.hpp: check_launch_options).
gdn_status check_launch(std::string_view where, const gdn_problem& p, const gdn_launch_options* o) {
  if (o == nullptr) return GDN_OK;
  const std::string why = check_launch_options(*o, p.Hk > 0 ? p.Hv / p.Hk : 0);
  if (why.empty()) return GDN_OK;
  return fail(GDN_ERROR_INVALID_ARGUMENT, cat(where, ": a->launch->", why));
}

}  // namespace

gdn_status validate_fwd_args(const gdn_problem& p, const gdn_fwd_args* a, const ProblemFacts& f,
                             std::string_view where) {
  if (a == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "a", "a pointer to a gdn_fwd_args", "NULL");
  const TensorTexts t = tensor_texts(p);
  if (gdn_status s = check_required(where, f,
                                    {{"a->q", a->q, t.qk},
                                     {"a->k", a->k, t.qk},
                                     {"a->v", a->v, t.v},
                                     {"a->g", a->g, t.gate},
                                     {"a->beta", a->beta, t.beta},
                                     {"a->o", a->o, t.v}});
      s != GDN_OK)
    return s;
  if (gdn_status s = check_aligned_16(
          where, f, {{"a->q", a->q, t.qk}, {"a->k", a->k, t.qk}, {"a->v", a->v, t.v}, {"a->o", a->o, t.v}});
      s != GDN_OK)
    return s;
  if (gdn_status s = check_launch(where, p, a->launch); s != GDN_OK) return s;
  return check_workspace_pair(where, "a->workspace_bytes", a->workspace, a->workspace_bytes);
}

gdn_status validate_bwd_args(const gdn_problem& p, const gdn_bwd_args* a, const ProblemFacts& f,
                             std::string_view where) {
  if (a == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "a", "a pointer to a gdn_bwd_args", "NULL");
  const TensorTexts t = tensor_texts(p);
  if (gdn_status s = check_required(where, f,
                                    {{"a->q", a->q, t.qk},
                                     {"a->k", a->k, t.qk},
                                     {"a->v", a->v, t.v},
                                     {"a->g", a->g, t.gate},
                                     {"a->beta", a->beta, t.beta},
                                     {"a->d_o", a->d_o, t.v},
                                     {"a->dq", a->dq, t.qk},
                                     {"a->dk", a->dk, t.qk},
                                     {"a->dv", a->dv, t.v},
                                     {"a->dg", a->dg, t.gate},
                                     {"a->dbeta", a->dbeta, t.beta}});
      s != GDN_OK)
    return s;
  if (gdn_status s = check_launch(where, p, a->launch); s != GDN_OK) return s;
  return check_workspace_pair(where, "a->workspace_bytes", a->workspace, a->workspace_bytes);
}

}  // namespace gdn::detail
