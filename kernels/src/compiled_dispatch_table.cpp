// The dispatch table compiled into libgdn. CMake defines GDN_DISPATCH_TABLE_HEADER (the path
// of a header written by `gdnlab export`): the committed kernels/tables/gdn_dispatch_table.hpp
// by default, or -DGDN_DISPATCH_TABLE=<header>; with GDN_DISPATCH_TABLE=none libgdn has no
// table and every call takes the default selection rule.
#include "table_dispatch.hpp"

#ifdef GDN_DISPATCH_TABLE_HEADER
// What a generated header includes, first: inside the namespace below they would be skipped
// by their include guards anyway.
#include <array>
#include <string_view>

#include "gdn/db/dispatch_lookup.hpp"

// The table's inline variables (kEntries, kTableInfo) get internal linkage: the header is
// included inside an unnamed namespace, where its gdn::dispatch::generated names the format
// through a using-directive. Without this, a program or library that includes a generated
// header of its own (the tests do, linking libgdn's objects statically; so may a user comparing
// tables) shares the symbols with this one: same names, another table, another size.
namespace {
namespace gdn::dispatch {
using namespace ::gdn::dispatch;
}  // namespace gdn::dispatch
#include GDN_DISPATCH_TABLE_HEADER

// Here `gdn` names the unnamed namespace's (declared in this scope), `::gdn` libgdn's.
::gdn::detail::DispatchTable built_in_table() {
  return {gdn::dispatch::generated::kEntries, &gdn::dispatch::generated::kTableInfo};
}
}  // namespace
#endif

namespace gdn::detail {

DispatchTable compiled_dispatch_table() {
#ifdef GDN_DISPATCH_TABLE_HEADER
  return built_in_table();
#else
  return DispatchTable{};
#endif
}

}  // namespace gdn::detail
