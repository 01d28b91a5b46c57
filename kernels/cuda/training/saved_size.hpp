// The size of a training-mode forward's saved block (gdn_saved, gdn.h). Plain C++, so the host
// code of kernels/src (gdn_saved_init, the argument checks) can call it.
#pragma once

#include <cstddef>

#include "gdn/gdn.h"

namespace gdn::fused {

// Bytes of the saved block of a valid problem with CP segments of segment_chunks chunks
// (0: none): saved_buffers.cuh lays them out.
size_t saved_bytes(const gdn_problem& p, int segment_chunks);

}  // namespace gdn::fused
