// Internal: the check of a caller-provided workspace against what the chosen variant needs.
#pragma once

#include <cstddef>
#include <string_view>

#include "gdn/gdn.h"
#include "internal_api.hpp"

namespace gdn::detail {

// GDN_OK when `workspace` is NULL (the library allocates) or holds at least `needed` bytes;
// else GDN_ERROR_WORKSPACE naming a->workspace_bytes, the need and the variant.
GDN_INTERNAL_API gdn_status check_workspace(std::string_view where, const void* workspace,
                                            size_t given_bytes, size_t needed_bytes,
                                            std::string_view variant_name);

}  // namespace gdn::detail
