// gdn_problem_init and gdn_version: the two entry points that cannot fail.
#include <cmath>

#include "gdn/gdn.h"

// The build passes the project version (kernels/CMakeLists.txt); a build that does not
// says so instead of inventing a number.
#ifndef GDN_VERSION_STRING
#define GDN_VERSION_STRING "unknown (built without GDN_VERSION_STRING)"
#endif

extern "C" void gdn_problem_init(gdn_problem* p, int64_t B, int64_t T, int32_t Hk, int32_t Hv,
                                 int32_t K, int32_t V) {
  if (p == nullptr) return;  // nothing to fill; gdn_validate_problem reports a NULL problem
  *p = gdn_problem{};
  p->B = B;
  p->T = T;
  p->num_seqs = B;  // without cu_seqlens N = B; callers that pack set cu_seqlens and num_seqs
  p->cu_seqlens = nullptr;
  p->cu_seqlens_host = nullptr;
  p->cu_seqlens_dtype = GDN_INT32;
  p->max_seqlen_hint = 0;
  p->Hk = Hk;
  p->Hv = Hv;
  p->K = K;
  p->V = V;
  p->qkv_dtype = GDN_BF16;
  p->beta_dtype = GDN_FP32;
  // K^-0.5 as FLA does; a non-positive K gets NaN here and is rejected by validation.
  p->scale = K > 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(K))) : NAN;
  p->state_layout = GDN_STATE_KV;
}

extern "C" const char* gdn_version(void) { return GDN_VERSION_STRING; }
