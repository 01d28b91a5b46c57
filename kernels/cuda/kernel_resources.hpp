// The static resources of a variant's main kernel, read once a device exists: what
// Variant::resources() reports and describe() prints.
#pragma once

#include <cstddef>
#include <string>

#include "gdn/variant.hpp"

namespace gdn {

// Registers, static + dynamic shared memory and local memory (spills) of `kernel` from
// cudaFuncGetAttributes; dynamic_smem_bytes is what its launches request. All fields stay -1
// without a device or when the query fails (the CUDA error is cleared, not left sticky).
Variant::Resources query_kernel_resources(const void* kernel, size_t dynamic_smem_bytes);

// "; <label> R regs, S B smem, L B local" when the resources are known, "" otherwise.
std::string describe_resources(const char* label, const Variant::Resources& r);

}  // namespace gdn
