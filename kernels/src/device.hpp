// Internal: the CUDA device facts the library needs, each read once and cached, and the
// mapping of CUDA errors to statuses. Nothing here synchronises the device.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string_view>

#include "gdn/gdn.h"

namespace gdn::detail {

// GDN_OK when the current device is usable (compute capability 9.0, the sm_90a kernels),
// else GDN_ERROR_NOT_AVAILABLE with the reason as the message.
gdn_status require_device(std::string_view where);

// Streaming multiprocessors of the current device (cudaDevAttrMultiProcessorCount, cached per
// device). Call after require_device succeeded.
gdn_status current_sm_count(std::string_view where, int* sm_count);

// Whether the current device reads pageable host memory directly (HMM or ATS,
// cudaDevAttrPageableMemoryAccess, cached per device); nullopt, with no error recorded, when
// there is no usable device (validation then cannot ask where a pointer points).
std::optional<bool> usable_device_reads_pageable_memory();

// GDN_ERROR_CUDA with "<where>: <call> failed: <cudaGetErrorName>: <cudaGetErrorString>".
gdn_status cuda_failure(cudaError_t error, std::string_view where, std::string_view call);

}  // namespace gdn::detail
