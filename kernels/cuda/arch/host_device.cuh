// GDN_HOST_DEVICE: __host__ __device__ under nvcc, nothing otherwise, for the small pure
// functions that kernels call and host-only tests (plain C++ translation units) check too.
#pragma once

#if defined(__CUDACC__)
#define GDN_HOST_DEVICE __host__ __device__
#else
#define GDN_HOST_DEVICE
#endif
