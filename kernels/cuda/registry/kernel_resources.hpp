// The static resources of a variant's main kernel, read once a device exists: what
// Variant::resources() reports and describe() prints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "gdn/variant.hpp"

namespace gdn {

// Registers, static + dynamic shared memory and local memory (spills) of `kernel` from
// cudaFuncGetAttributes; dynamic_smem_bytes is what its launches request, threads its block
// size. ctas_per_sm is what the SM's shared memory (the largest carveout), register file and
// thread slots allow together. All fields stay -1 without a device or when the query fails
// (the CUDA error is cleared, not left sticky).
Variant::Resources query_kernel_resources(const void* kernel, size_t dynamic_smem_bytes,
                                          int threads);

// How many CTAs fit on one SM, given its limits (the CUDA occupancy arithmetic: registers are
// allocated per warp in units of 256, shared memory per CTA plus the per-CTA reserve).
struct SmLimits {
  int shared_bytes_per_sm;        // largest carveout
  int reserved_shared_per_cta;
  int registers_per_sm;
  int max_threads_per_sm;
  int max_ctas_per_sm;
};
// -1 when registers, shared_bytes or threads are unknown (negative or zero).
constexpr int resident_ctas_per_sm(const SmLimits& sm, int registers, int shared_bytes,
                                   int threads) {
  if (registers <= 0 || shared_bytes < 0 || threads <= 0) return -1;
  const int warps = (threads + 31) / 32;
  const int regs_per_warp = ((registers * 32 + 255) / 256) * 256;
  int n = sm.max_ctas_per_sm;
  n = std::min(n, sm.max_threads_per_sm / (warps * 32));
  n = std::min(n, sm.registers_per_sm / (regs_per_warp * warps));
  n = std::min(n, sm.shared_bytes_per_sm / (shared_bytes + sm.reserved_shared_per_cta));
  return n;
}

// "; <label> R regs, S B smem, L B local" when the resources are known, "" otherwise.
std::string describe_resources(const char* label, const Variant::Resources& r);

}  // namespace gdn
