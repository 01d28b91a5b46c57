// Internal: the dispatch decision of one call: validate-free, host-only.
#pragma once

#include <string_view>

#include "gdn/variant.hpp"
#include "table_dispatch.hpp"
#include "validation.hpp"

namespace gdn::detail {

// Decides the variant for a validated problem on the current device: the compiled dispatch
// table first, then the default selection rule (table_dispatch.hpp). Needs the device (for its
// SM count, read once and cached), never touches device memory. gdn_fwd, gdn_bwd,
// gdn_fwd_variant_name and gdn_fwd_dispatch_source all decide through this one function.
// On failure returns the status with the message set and leaves *decision unchanged.
gdn_status decide_for_call(Pass pass, const gdn_problem& p, const ProblemFacts& facts,
                           std::string_view where, DispatchDecision* decision);

// A training forward (gdn_saved) runs a variant that keeps what the backward reads: the fused
// family's. GDN_OK, else GDN_ERROR_UNSUPPORTED with a message naming `argument` and the variant.
gdn_status require_saving_forward(const Variant& v, std::string_view where,
                                  std::string_view argument);

// The pins a call runs with: the table entry's, each field the call pins (`call`, may be
// nullptr) replaced by the call's.
GDN_INTERNAL_API gdn_launch_options merge_pins(const gdn_launch_options& table,
                                               const gdn_launch_options* call);

}  // namespace gdn::detail
