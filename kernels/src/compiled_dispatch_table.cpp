// The dispatch table compiled into libgdn. CMake defines GDN_DISPATCH_TABLE_HEADER (the path
// of a header written by `gdnlab export`) when configured with -DGDN_DISPATCH_TABLE=<header>;
// without it libgdn has no table and every call takes the default selection rule.
#include "table_dispatch.hpp"

#ifdef GDN_DISPATCH_TABLE_HEADER
#include GDN_DISPATCH_TABLE_HEADER
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
