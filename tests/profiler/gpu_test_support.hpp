#pragma once

#include <gtest/gtest.h>

#include "gdn/profiler/device_info.hpp"

// Every GPU test starts with this: without a device the test reports skipped, not passed.
#define GDN_REQUIRE_GPU()                                                   \
  do {                                                                      \
    if (::gdn::profiler::cuda_device_count() == 0)                          \
      GTEST_SKIP() << "skipped: no CUDA device";                            \
  } while (0)
