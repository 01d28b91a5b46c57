// Status strings and the thread-local last error.
#include "status.hpp"

#include <utility>

namespace gdn::detail {

namespace {
// One message per thread: concurrent callers on different threads never see each
// other's errors, and no lock is needed.
thread_local std::string last_error_message;
}  // namespace

gdn_status fail(gdn_status status, std::string message) {
  last_error_message = std::move(message);
  return status;
}

gdn_status reject(gdn_status status, std::string_view where, std::string_view argument,
                  std::string_view expected, std::string_view given) {
  return fail(status, cat(where, ": ", argument, ": expected ", expected, "; got ", given));
}

}  // namespace gdn::detail

extern "C" const char* gdn_last_error(void) { return gdn::detail::last_error_message.c_str(); }

extern "C" const char* gdn_status_string(gdn_status s) {
  switch (s) {
    case GDN_OK: return "ok";
    case GDN_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GDN_ERROR_UNSUPPORTED: return "unsupported problem (no kernel for it in this build)";
    case GDN_ERROR_NOT_AVAILABLE: return "not available (no usable CUDA device or no kernels)";
    case GDN_ERROR_CUDA: return "CUDA error";
    case GDN_ERROR_WORKSPACE: return "workspace too small";
    case GDN_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}
