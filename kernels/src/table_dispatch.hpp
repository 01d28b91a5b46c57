// Internal: the dispatch decision with a tuned table in front of the default selection rule.
// Pure host code (no device, no CUDA): the tests run it over generated tables and fake
// variants; libgdn runs it over the table compiled in with -DGDN_DISPATCH_TABLE (if any).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "default_selection.hpp"
#include "gdn/dispatch_table.hpp"
#include "gdn/variant.hpp"
#include "internal_api.hpp"
#include "validation.hpp"

namespace gdn::detail {

// A dispatch table and what it was tuned on; an empty `entries` means no table.
struct DispatchTable {
  std::span<const dispatch::Entry> entries;
  const dispatch::TableInfo* info = nullptr;  // nullptr when there is no table
  std::shared_ptr<const void> owner;  // keeps a loaded table alive; empty for a compiled one
  std::string origin;                 // "" when compiled in, else the file it was loaded from
};

// The table compiled into this build (-DGDN_DISPATCH_TABLE=<header>), or an empty one.
GDN_INTERNAL_API DispatchTable compiled_dispatch_table();

// The table in force: the last one gdn_load_dispatch_table loaded, else the compiled one.
GDN_INTERNAL_API DispatchTable active_dispatch_table();

// Parses the text of an exported dispatch.json (format versions 2 and 3) into a table whose
// `origin` is `origin`. On error returns false with *error naming the entry and field, what
// was expected and what was given.
GDN_INTERNAL_API bool parse_dispatch_json(const std::string& text, const std::string& origin,
                                          DispatchTable* out, std::string* error);

struct DispatchDecision {
  const Variant* variant = nullptr;        // never nullptr when `implementable` was not empty
  const dispatch::Entry* entry = nullptr;  // the table entry that decided, else nullptr (valid
                                           // while `table_owner` or the compiled table lives)
  gdn_launch_options plan = kRulePins;     // the deciding entry's plan pins, else the rule
  std::shared_ptr<const void> table_owner;
  int distance = -1;                       // bucket distance of `entry` (0: exact bucket)
  std::string source;                      // one line: table (bucket, device, sweep) or
                                           // default rule (and why the table did not decide)
};

// The lookup key of a validated problem, from host-side facts only: the longest sequence is
// known when it came from cu_seqlens_host, max_seqlen_hint or the batched layout (T); a packed
// problem with neither leaves it unknown (dispatch never copies cu_seqlens from the device).
GDN_INTERNAL_API dispatch::Shape dispatch_shape(Pass pass, const gdn_problem& p,
                                                const ProblemFacts& facts);

// The rule: look the shape up in `table` (exact bucket, else the nearest within
// dispatch::kDefaultMaxDistance, see gdn/dispatch_table.hpp); when an entry is found and names a
// variant in `implementable`, that variant; otherwise the default selection rule over
// `implementable` (non-empty), with `source` saying why the table did not decide.
// `compiled` is every variant of the build (gdn::registry()): it only tells "not compiled"
// from "cannot implement this problem" in that explanation.
GDN_INTERNAL_API DispatchDecision decide_variant(const DispatchTable& table,
                                                 const dispatch::Shape& shape,
                                                 std::span<const Variant* const> implementable,
                                                 std::span<const Variant* const> compiled,
                                                 const SelectionInput& selection);

}  // namespace gdn::detail
