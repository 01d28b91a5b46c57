// The dispatch table compiled into libgdn. CMake defines GDN_DISPATCH_TABLE_HEADER (the path
// of a header written by `gdnlab export`): the committed kernels/tables/gdn_dispatch_table.hpp
// by default, or -DGDN_DISPATCH_TABLE=<header>; with GDN_DISPATCH_TABLE=none libgdn has no
// table and every call takes the default selection rule.
#include "table_dispatch.hpp"

#ifdef GDN_DISPATCH_TABLE_HEADER
// What a generated header includes, first, so that only its own declarations fall under the
// pragma below.
#include <array>
#include <string_view>

#include "gdn/dispatch_table.hpp"
// The table's inline variables (kEntries, kTableInfo) stay inside libgdn. Without this, a
// program that includes a generated header of its own (the tests do; so may a user comparing
// tables) has the dynamic linker bind libgdn's references to the program's arrays: same
// symbol names, another table, another size.
#pragma GCC visibility push(hidden)
#include GDN_DISPATCH_TABLE_HEADER
#pragma GCC visibility pop
#endif

namespace gdn::detail {

DispatchTable compiled_dispatch_table() {
#ifdef GDN_DISPATCH_TABLE_HEADER
  return DispatchTable{dispatch::generated::kEntries, &dispatch::generated::kTableInfo};
#else
  return DispatchTable{};
#endif
}

}  // namespace gdn::detail
