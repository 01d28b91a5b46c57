// Device faults for the GPU fault tests (gpu_fault_kernels.cu).
#pragma once

#include <cstdint>

namespace gdn::tuner::testing {

void illegal_address_fault();  // a kernel faults: a sticky cudaErrorIllegalAddress from now on
void endless_kernel();         // a kernel that never finishes; does not return

}  // namespace gdn::tuner::testing
