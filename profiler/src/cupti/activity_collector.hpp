// Process-wide collector of CUPTI activity records (CUPTI allows one set of buffer callbacks
// per process): kernel records and external-correlation records, plus dropped-record counts.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "activity_grouping.hpp"

namespace gdn::profiler::detail {

struct CollectedRecords {
  std::vector<KernelRecord> kernels;
  std::unordered_map<std::uint32_t, std::uint64_t> external_of;  // correlation -> external id
  std::size_t dropped = 0;
};

class ActivityCollector {
 public:
  static ActivityCollector& instance();

  // Registers the callbacks (once per process) and enables kernel + external-correlation
  // records. Throws CuptiFailure (e.g. another CUPTI client holds the activity API).
  void enable();
  // Flushes pending buffers and disables the record kinds; never throws.
  void disable() noexcept;
  // Forces CUPTI to hand over every record so far. Throws CuptiFailure.
  void flush();
  // Moves out everything collected since the last take.
  CollectedRecords take();

  // CUPTI's buffer callbacks (public for the C trampolines).
  void on_buffer_complete(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer,
                          std::size_t valid_bytes);

 private:
  ActivityCollector() = default;
  std::mutex mutex_;
  CollectedRecords records_;
  bool callbacks_registered_ = false;
};

}  // namespace gdn::profiler::detail
