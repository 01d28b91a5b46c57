#include "activity_collector.hpp"

#include <cupti.h>

#include <cstdlib>
#include <string>

#include "cupti_common.hpp"

namespace gdn::profiler::detail {
namespace {

// 8 MiB holds ~40k kernel records: a batch of the sampling loop fits easily, so records are
// not dropped for want of buffers.
constexpr std::size_t buffer_bytes = 8u << 20;

constexpr CUpti_ActivityKind enabled_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

void CUPTIAPI request_buffer(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, buffer_bytes));
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI complete_buffer(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer,
                              std::size_t /*size*/, std::size_t valid_bytes) {
  ActivityCollector::instance().on_buffer_complete(ctx, stream_id, buffer, valid_bytes);
  std::free(buffer);
}

}  // namespace

ActivityCollector& ActivityCollector::instance() {
  static ActivityCollector collector;
  return collector;
}

void ActivityCollector::enable() {
  {
    std::lock_guard lock(mutex_);
    if (!callbacks_registered_) {
      cupti_check(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer),
                  "cuptiActivityRegisterCallbacks");
      callbacks_registered_ = true;
    }
  }
  // External-correlation records are emitted alongside API records only, so the runtime and
  // driver API kinds are on too (driver: calls that launch through cuLaunchKernelEx directly).
  // Their records are ignored; only the correlation id -> sample id mapping is kept.
  for (const CUpti_ActivityKind kind : enabled_kinds) {
    const CUptiResult r = cuptiActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
      disable();
      throw CuptiFailure("cuptiActivityEnable(kind " + std::to_string(static_cast<int>(kind)) + ")", r);
    }
  }
}

void ActivityCollector::disable() noexcept {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (const CUpti_ActivityKind kind : enabled_kinds) cuptiActivityDisable(kind);
}

void ActivityCollector::flush() {
  cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
}

CollectedRecords ActivityCollector::take() {
  std::lock_guard lock(mutex_);
  CollectedRecords out = std::move(records_);
  records_ = {};
  return out;
}

void ActivityCollector::on_buffer_complete(CUcontext ctx, std::uint32_t stream_id,
                                           std::uint8_t* buffer, std::size_t valid_bytes) {
  std::lock_guard lock(mutex_);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      records_.kernels.push_back({k->correlationId, k->start, k->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        records_.external_of[e->correlationId] = e->externalId;
    }
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
    records_.dropped += dropped;
}

}  // namespace gdn::profiler::detail
