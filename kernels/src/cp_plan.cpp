// gdn_cp_plan: where one rank stands when the tokens of a (packed) problem are split over
// ranks (gdn_cp.h). Host only: it reads the global offsets and the rank boundaries and says
// which pieces of which sequences the rank holds, whether its first and last pieces continue
// across its boundaries and which ranks' carries its chains need.
#include "gdn/gdn_cp.h"
#include "status.hpp"

namespace gdn::detail {
namespace {

constexpr std::string_view kWhere = "gdn_cp_plan";

gdn_status check_rank_offsets(const int64_t* rank_offsets, int32_t num_ranks) {
  if (rank_offsets[0] != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "rank_offsets[0]",
                  "0 (the first rank starts at the first token)", cat(rank_offsets[0]));
  for (int32_t r = 1; r <= num_ranks; ++r)
    if (rank_offsets[r] <= rank_offsets[r - 1])
      return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, cat("rank_offsets[", r, "]"),
                    cat("more than rank_offsets[", r - 1, "] = ", rank_offsets[r - 1],
                        " (every rank holds at least one token)"),
                    cat(rank_offsets[r]));
  return GDN_OK;
}

gdn_status check_offsets(const int64_t* cu, int64_t num_seqs, int64_t tokens) {
  if (cu[0] != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "cu_seqlens_host[0]", "0", cat(cu[0]));
  for (int64_t s = 1; s <= num_seqs; ++s)
    if (cu[s] < cu[s - 1])
      return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, cat("cu_seqlens_host[", s, "]"),
                    cat("non-decreasing offsets (>= ", cu[s - 1], ")"), cat(cu[s]));
  if (cu[num_seqs] != tokens)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, cat("cu_seqlens_host[", num_seqs, "]"),
                  cat("the token count of the ranks, rank_offsets[num_ranks] = ", tokens),
                  cat(cu[num_seqs]));
  return GDN_OK;
}

// The rank holding token t (0 <= t < T).
int32_t rank_of_token(const int64_t* rank_offsets, int32_t num_ranks, int64_t t) {
  int32_t r = 0;
  while (r + 1 < num_ranks && rank_offsets[r + 1] <= t) ++r;
  return r;
}

}  // namespace
}  // namespace gdn::detail

extern "C" gdn_status gdn_cp_plan(const int64_t* cu_seqlens_host, int64_t num_seqs,
                                  const int64_t* rank_offsets, int32_t num_ranks, int32_t rank,
                                  gdn_cp_rank_plan* plan, int64_t* local_cu_seqlens_host,
                                  int64_t capacity) {
  using namespace gdn::detail;
  if (plan == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "plan", "a pointer to fill", "NULL");
  if (rank_offsets == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "rank_offsets",
                  "[num_ranks + 1] token offsets of the ranks", "NULL");
  if (num_ranks < 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "num_ranks", "at least 1", cat(num_ranks));
  if (rank < 0 || rank >= num_ranks)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "rank",
                  cat("0 .. num_ranks - 1 = ", num_ranks - 1), cat(rank));
  if (gdn_status s = check_rank_offsets(rank_offsets, num_ranks); s != GDN_OK) return s;
  const int64_t tokens = rank_offsets[num_ranks];
  const int64_t whole[2] = {0, tokens};
  if (cu_seqlens_host == nullptr && num_seqs != 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "num_seqs",
                  "1 when cu_seqlens_host is NULL (one sequence of all the tokens)",
                  cat(num_seqs));
  if (num_seqs < 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "num_seqs",
                  "at least 1 sequence to hold the tokens", cat(num_seqs));
  const int64_t* cu = cu_seqlens_host != nullptr ? cu_seqlens_host : whole;
  if (gdn_status s = check_offsets(cu, num_seqs, tokens); s != GDN_OK) return s;

  const int64_t begin = rank_offsets[rank], end = rank_offsets[rank + 1];
  const bool last_rank = rank == num_ranks - 1;
  // A piece: a sequence with tokens in [begin, end), or a zero-length one whose offset lies
  // there (the last rank also takes those at offset T). Offsets are sorted, so the pieces are
  // one run of sequences.
  const auto on_rank = [&](int64_t s) {
    if (cu[s + 1] > cu[s]) return cu[s] < end && cu[s + 1] > begin;
    return (cu[s] >= begin && cu[s] < end) || (last_rank && cu[s] == tokens);
  };
  int64_t first = 0;
  while (!on_rank(first)) ++first;  // token `begin` lies in some sequence: the loop ends
  int64_t last = first;
  while (last + 1 < num_seqs && on_rank(last + 1)) ++last;
  const int64_t pieces = last - first + 1;
  if (local_cu_seqlens_host != nullptr && capacity < pieces + 1)
    return reject(GDN_ERROR_INVALID_ARGUMENT, kWhere, "capacity",
                  cat("at least ", pieces + 1, " entries for rank ", rank, "'s local offsets"),
                  cat(capacity));

  gdn_cp_rank_plan out{};
  out.rank = rank;
  out.num_ranks = num_ranks;
  out.token_begin = begin;
  out.token_end = end;
  out.first_seq = first;
  out.num_local_seqs = pieces;
  out.head_continues = cu[first] < begin ? 1 : 0;
  out.tail_continues = cu[last + 1] > end ? 1 : 0;
  out.fwd_chain_first = rank;
  out.bwd_chain_first = rank + 1;
  if (out.head_continues) {
    out.fwd_chain_first = rank_of_token(rank_offsets, num_ranks, cu[first]);
    out.fwd_chain_count = rank - out.fwd_chain_first;
  }
  if (out.tail_continues)
    out.bwd_chain_count = rank_of_token(rank_offsets, num_ranks, cu[last + 1] - 1) - rank;
  if (local_cu_seqlens_host != nullptr)
    for (int64_t s = first; s <= last + 1; ++s) {
      const int64_t clipped = cu[s] < begin ? begin : (cu[s] > end ? end : cu[s]);
      local_cu_seqlens_host[s - first] = clipped - begin;
    }
  *plan = out;
  return GDN_OK;
}
