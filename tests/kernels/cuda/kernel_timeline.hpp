// Per-kernel GPU start and end times of one CUDA-graph replay (CUPTI concurrent-kernel activity
// records), to see where a forward call's time goes between its launches: each kernel's span,
// the gap before it and its overlap with the previous one (PDL and the prepare overlap make
// kernels run side by side, which ncu's serialised durations hide). For gdn_fused_bench.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gdn::testing::gpu {

struct KernelSpan {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
};

// Replays `exec` on `s` `replays` times with kernel activity recording on and returns the
// kernels of the last replay in start order. Throws if CUPTI cannot record.
std::vector<KernelSpan> record_graph_timeline(cudaGraphExec_t exec, cudaStream_t s, int replays);

// One line per kernel: start offset and duration in microseconds from the first kernel's start,
// then the short kernel name; and the total span.
std::string format_timeline(const std::vector<KernelSpan>& spans);

}  // namespace gdn::testing::gpu
