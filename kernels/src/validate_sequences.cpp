// Validation of the sequence structure: cu_seqlens (device pointer, dtype, host copy),
// num_seqs and max_seqlen_hint. The device copy of cu_seqlens is never read back: its
// contents are checked only through cu_seqlens_host when the caller provides one.
#include <algorithm>
#include <limits>

#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

namespace {

int64_t host_offset(const gdn_problem& p, int64_t i) {
  return p.cu_seqlens_dtype == GDN_INT32 ? static_cast<const int32_t*>(p.cu_seqlens_host)[i]
                                         : static_cast<const int64_t*>(p.cu_seqlens_host)[i];
}

// Offsets must be 0 = cu[0] <= cu[1] <= ... <= cu[N] = T. Zero-length sequences are legal.
gdn_status check_host_offsets(const gdn_problem& p, std::string_view where, int64_t* longest) {
  const int64_t n = p.num_seqs;
  if (int64_t first = host_offset(p, 0); first != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->cu_seqlens_host[0]",
                  "0 (offsets start at the first token)", cat(first));
  int64_t previous = 0;
  int64_t max_length = 0;
  for (int64_t i = 1; i <= n; ++i) {
    const int64_t offset = host_offset(p, i);
    if (offset < previous)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, cat("p->cu_seqlens_host[", i, "]"),
                    cat("non-decreasing offsets (>= cu_seqlens_host[", i - 1, "] = ", previous,
                        ")"),
                    cat(offset));
    max_length = std::max(max_length, offset - previous);
    previous = offset;
  }
  if (previous != p.T)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, cat("p->cu_seqlens_host[", n, "]"),
                  cat("the total token count p->T = ", p.T, " (the last offset ends at T)"),
                  cat(previous));
  *longest = max_length;
  return GDN_OK;
}

gdn_status check_packed(const gdn_problem& p, std::string_view where, ProblemFacts* f) {
  if (p.B != 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->B",
                  "B = 1 when cu_seqlens is given (packed sequences live in one batch row)",
                  cat(p.B));
  const int index_dtype = static_cast<int>(p.cu_seqlens_dtype);
  if (index_dtype != GDN_INT32 && index_dtype != GDN_INT64)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->cu_seqlens_dtype",
                  "GDN_INT32 (0) or GDN_INT64 (1)", cat(index_dtype));
  if (p.num_seqs < 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->num_seqs",
                  "num_seqs >= 0 (cu_seqlens holds num_seqs + 1 offsets)", cat(p.num_seqs));
  if (p.num_seqs == 0 && p.T > 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->num_seqs",
                  cat("at least one sequence to hold the p->T = ", p.T, " tokens"), "0");
  if (index_dtype == GDN_INT32 && p.T > std::numeric_limits<int32_t>::max())
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->cu_seqlens_dtype",
                  cat("GDN_INT64 for p->T = ", p.T, " tokens (int32 offsets end at 2^31 - 1)"),
                  "GDN_INT32");
  f->num_seqs = p.num_seqs;
  f->longest = p.T;  // an upper bound until the host copy or the hint says more
  f->longest_exact = false;
  if (p.cu_seqlens_host != nullptr) {
    if (gdn_status s = check_host_offsets(p, where, &f->longest); s != GDN_OK) return s;
    f->longest_exact = true;
  }
  return GDN_OK;
}

gdn_status check_batched(const gdn_problem& p, std::string_view where, ProblemFacts* f) {
  if (p.cu_seqlens_host != nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->cu_seqlens_host",
                  "NULL when p->cu_seqlens is NULL (a host copy needs the device offsets too)",
                  "a non-NULL pointer");
  if (p.num_seqs != 0 && p.num_seqs != p.B)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->num_seqs",
                  cat("0 or p->B = ", p.B, " without cu_seqlens (N = B sequences of length T)"),
                  cat(p.num_seqs));
  f->num_seqs = p.B;
  f->longest = p.T;
  f->longest_exact = true;
  return GDN_OK;
}

// The hint steers the dispatch (segment counts for context parallelism), so a hint that
// contradicts what is known is an error rather than a slow surprise.
gdn_status check_hint(const gdn_problem& p, std::string_view where, ProblemFacts* f) {
  const int64_t hint = p.max_seqlen_hint;
  if (hint < 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->max_seqlen_hint",
                  "0 (unknown) or the longest sequence length", cat(hint));
  if (hint == 0) return GDN_OK;
  if (hint > p.T)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->max_seqlen_hint",
                  cat("at most p->T = ", p.T, " (no sequence is longer than T)"), cat(hint));
  if (f->longest_exact && hint < f->longest)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "p->max_seqlen_hint",
                  cat("at least the longest sequence, ", f->longest, " tokens"), cat(hint));
  if (!f->longest_exact) f->longest = hint;
  return GDN_OK;
}

}  // namespace

gdn_status validate_sequences(const gdn_problem& p, std::string_view where, ProblemFacts* f) {
  gdn_status s = p.cu_seqlens != nullptr ? check_packed(p, where, f) : check_batched(p, where, f);
  if (s != GDN_OK) return s;
  return check_hint(p, where, f);
}

}  // namespace gdn::detail
