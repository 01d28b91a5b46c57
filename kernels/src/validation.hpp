// Internal: argument validation shared by gdn_validate_*, the workspace queries and the
// entry points. Every function returns GDN_OK or a failure whose message names the argument
// (see status.hpp); `where` is the public entry point the caller is in.
#pragma once

#include <cstdint>
#include <string_view>

#include "gdn/gdn.h"

namespace gdn::detail {

// What validation learns about a problem; the dispatch decision uses it.
struct ProblemFacts {
  int64_t num_seqs = 0;   // N: sequences (B without cu_seqlens)
  int64_t tokens = 0;     // B * T
  int64_t longest = 0;    // the longest sequence: exact when longest_exact, else an upper bound
  bool longest_exact = false;
};

gdn_status validate_problem(const gdn_problem* p, std::string_view where, ProblemFacts* facts);

// Part of validate_problem: cu_seqlens, its host copy, num_seqs and max_seqlen_hint.
// Runs after the sizes are known to be non-negative.
gdn_status validate_sequences(const gdn_problem& p, std::string_view where, ProblemFacts* facts);

// Part of validate_problem: byte sizes of every tensor fit 64-bit indexing.
gdn_status validate_index_ranges(const gdn_problem& p, int64_t num_seqs, std::string_view where);

// Pointer rules of the argument structs (the problem must already be valid), and the plan
// pins of a->launch (a field outside the values it takes is rejected, naming it).

gdn_status validate_fwd_args(const gdn_problem& p, const gdn_fwd_args* a, const ProblemFacts& f,
                             std::string_view where);
gdn_status validate_bwd_args(const gdn_problem& p, const gdn_bwd_args* a, const ProblemFacts& f,
                             std::string_view where);

// Everything gdn_fwd / gdn_bwd check before they look at the device, in their order: the
// problem, the argument pointers and the memory they point to, the launch-plan pins.
// gdn_validate_fwd / gdn_validate_bwd run exactly these, so a call they accept is refused by
// the entry point only for the device (none usable) or the workspace size of the variant.
gdn_status validate_call(const gdn_problem* p, const gdn_fwd_args* a, std::string_view where,
                         ProblemFacts* facts);
gdn_status validate_call(const gdn_problem* p, const gdn_bwd_args* a, std::string_view where,
                         ProblemFacts* facts);

}  // namespace gdn::detail
