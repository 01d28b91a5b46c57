// Internal: how every entry point reports a failure. The status is returned; the message
// (which argument, what was expected, what was given) goes to the thread-local last error
// that gdn_last_error() returns.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "gdn/gdn.h"

namespace gdn::detail {

// Stores `message` as this thread's last error and returns `status`.
gdn_status fail(gdn_status status, std::string message);

// The one message shape used for argument errors:
//   "<where>: <argument>: expected <expected>; got <given>"
gdn_status reject(gdn_status status, std::string_view where, std::string_view argument,
                  std::string_view expected, std::string_view given);

// Concatenates anything streamable; keeps the message-building code short at call sites.
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace gdn::detail
