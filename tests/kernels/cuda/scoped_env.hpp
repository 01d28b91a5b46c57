// Sets an environment variable for one scope (nullptr: unsets it) and restores what was there:
// the GPU tests that run one variant under each value of a library override
// (GDN_PREPARE_OVERLAP, GDN_CP_FIRST_SEGMENT, GDN_PREPARE_TAIL).
#pragma once

#include <cstdlib>
#include <string>

namespace gdn::testing::gpu {

class ScopedEnv {
 public:
  ScopedEnv(const char* var, const char* value) : var_(var) {
    if (const char* old = std::getenv(var)) had_ = true, old_ = old;
    if (value)
      setenv(var, value, 1);
    else
      unsetenv(var);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(var_.c_str(), old_.c_str(), 1);
    else
      unsetenv(var_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string var_;
  bool had_ = false;
  std::string old_;
};

}  // namespace gdn::testing::gpu
