// Thin PTX wrappers of Hopper's warpgroup tensor-core products (wgmma.mma_async, sm_90a) as
// the column-warp chunk loop uses them: A from registers (each warp's 16 rows in the
// mma.m16n8k16 A-fragment layout, so a C fragment pair packed to 16 bits is an A fragment),
// B from shared memory through a matrix descriptor, fp32 accumulators in the m16n8 C layout
// per warp and n8 block (d[j][0..3]: rows g, g + 8 of the warp's 16, columns 8 j + 2 t, + 1).
// Shared-memory operands use the canonical 128-byte-swizzle layout (the same placement as
// SwizzledTile16<64> at a 1024-byte aligned base): 8-row x 128-byte atoms, the 16-byte groups
// of row r XOR-ed with r % 8.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "arch/mma.cuh"

namespace gdn::fused {

// wgmma reads shared memory through the async proxy: a thread's cp.async (generic proxy)
// writes must be fenced before the barrier that publishes them to the warpgroup's wgmma.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Warpgroup register reallocation (setmaxnreg, sm_90a): every thread of the warpgroup
// executes it. A producer warpgroup gives registers back to the CTA's pool (dec) so that the
// math warpgroups can take them (inc, which waits until the pool holds enough). N is a
// multiple of 8 in [24, 256].
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes multiples of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes multiples of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// Orders prior register writes (A fragments, accumulators) before the next wgmma reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// An empty asm that "rewrites" each accumulator: placed after wgmma_wait, it keeps the compiler
// from hoisting reads of the accumulators above the wait (the wgmma asm is their last writer as
// far as the compiler knows, but the values land only at the wait).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N][4]) {
#pragma unroll
  for (int j = 0; j < N; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
}

// A shared-memory matrix descriptor (PTX ISA, wgmma matrix descriptor): the start address,
// the leading and stride byte offsets (16-byte units, 14 bits each) and the swizzle mode in
// bits 62-63 (1: 128-byte, 3: 32-byte).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                              uint32_t swizzle_mode) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(lbo_bytes >> 4) << 16) |
         (uint64_t(sbo_bytes >> 4) << 32) | (uint64_t(swizzle_mode) << 62);
}

// Descriptor of a 128-byte-swizzled operand at shared byte address `addr` (the atom grid
// 1024-byte aligned; addr may step inside a row by 32-byte k16 slices, as CUTLASS does).
//   K-major (rows = the product's n, 64 elements of depth per 128-byte row): sbo = the stride
//     of 8-row groups (1024 for consecutive rows); lbo unused (1).
//   MN-major (rows = depth, 64 n-elements per row): lbo = the stride between 64-element
//     n blocks, sbo = the stride of 8-row depth groups.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return smem_desc(addr, lbo_bytes, sbo_bytes, 1);
}

// Descriptor of a 32-byte-swizzled K-major operand at shared byte address `addr` (on a
// 256-byte atom boundary): 8-row x 32-byte atoms, sbo = the stride of 8-row groups (256 for
// consecutive rows); lbo unused (16 bytes): one k16 step is the atom's whole width.
__device__ __forceinline__ uint64_t sw32_desc(uint32_t addr, uint32_t sbo_bytes) {
  return smem_desc(addr, 16, sbo_bytes, 3);
}

// A 16-bit matrix of `rows` rows and 64 or 128 columns in shared memory, in wgmma's canonical
// 128-byte swizzle at a 1024-byte aligned base: 64-column halves of rows x 128 bytes each
// (half h at h * rows * 128 bytes), 8-row x 128-byte atoms, the 16-byte group of column c in
// row r at (c % 64 / 8) ^ (r % 8). Any such tile is a wgmma B operand in either orientation
// (desc_nk, desc_kn) and an ldmatrix source (at(r, c) keeps 8 columns from a multiple of 8 in
// 16 contiguous bytes; eight rows at one logical group hit eight distinct bank groups).
struct WgTile16 {
  uint16_t* p;
  int rows;
  __device__ __forceinline__ int offset(int r, int c) const {
    return (c >> 6) * rows * 64 + r * 64 + ((((c >> 3) & 7) ^ (r & 7)) << 3) + (c & 7);
  }
  __device__ __forceinline__ uint16_t* at(int r, int c) const { return p + offset(r, c); }
  __device__ __forceinline__ uint32_t& pair(int r, int c) const {  // c even
    return *reinterpret_cast<uint32_t*>(p + offset(r, c));
  }
  __device__ __forceinline__ uint32_t half_bytes() const { return uint32_t(rows) * 128; }
  // B operand of depth k0..k0+15 (k0 a multiple of 16) when the tile stores B^T (rows = the
  // product's n, from n0, a multiple of 8): K-major, the k16 slice 32 bytes into the row.
  __device__ __forceinline__ uint64_t desc_nk(int n0, int k0) const {
    return sw128_desc(smem_addr(p) + (k0 / 64) * half_bytes() + n0 * 128 + (k0 % 64) * 2, 16, 1024);
  }
  // B operand of depth k0..k0+15 when the tile stores B (rows = depth, columns = n from n0, a
  // multiple of 64): MN-major, the 64-column halves lbo apart, 8-row depth groups 1024 B apart.
  __device__ __forceinline__ uint64_t desc_kn(int k0, int n0) const {
    return sw128_desc(smem_addr(p) + (n0 / 64) * half_bytes() + k0 * 128, half_bytes(), 1024);
  }
};

// Zeroes kBytes (a multiple of 16) of a 16-byte aligned shared tile, by kThreads threads
// (tid: this thread's index among them); default: a whole 64 x 64 16-bit tile (a product's
// operand that is never loaded, such as the M columns' V or dO tiles in CP pass 1).
template <int kThreads, int kBytes = 64 * 64 * 2>
__device__ __forceinline__ void zero_tile(void* tile, int tid) {
  static_assert(kBytes % 16 == 0, "16-byte stores");
  for (int u = tid; u < kBytes / 16; u += kThreads)
    reinterpret_cast<uint4*>(tile)[u] = make_uint4(0, 0, 0, 0);
}

#define GDN_WGMMA_ASM_M64N64(TY)                                                   \
  "{\n"                                                                            \
  ".reg .pred p;\n"                                                                \
  "setp.ne.b32 p, %37, 0;\n"                                                       \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {"                     \
  "%0, %1, %2, %3, %4, %5, %6, %7, "                                               \
  "%8, %9, %10, %11, %12, %13, %14, %15, "                                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, "                                       \
  "%24, %25, %26, %27, %28, %29, %30, %31"                                         \
  "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n"                                  \
  "}\n"

#define GDN_WGMMA_ASM_M64N128(TY)                                                  \
  "{\n"                                                                            \
  ".reg .pred p;\n"                                                                \
  "setp.ne.b32 p, %69, 0;\n"                                                       \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {"                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, "                                               \
  "%8, %9, %10, %11, %12, %13, %14, %15, "                                         \
  "%16, %17, %18, %19, %20, %21, %22, %23, "                                       \
  "%24, %25, %26, %27, %28, %29, %30, %31, "                                       \
  "%32, %33, %34, %35, %36, %37, %38, %39, "                                       \
  "%40, %41, %42, %43, %44, %45, %46, %47, "                                       \
  "%48, %49, %50, %51, %52, %53, %54, %55, "                                       \
  "%56, %57, %58, %59, %60, %61, %62, %63"                                         \
  "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n"                                  \
  "}\n"

#define GDN_F4(d, j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define GDN_F32(d, j)                                                                    \
  GDN_F4(d, j), GDN_F4(d, j + 1), GDN_F4(d, j + 2), GDN_F4(d, j + 3), GDN_F4(d, j + 4), \
      GDN_F4(d, j + 5), GDN_F4(d, j + 6), GDN_F4(d, j + 7)

// D (64 x 64, fp32) = A (64 x 16, registers) B (16 x 64, shared) + (accumulate ? D : 0).
// kTransB: B stored MN-major (n contiguous) instead of K-major.
template <class Elem, bool kTransB>
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[8][4], const uint32_t (&a)[4],
                                                uint64_t desc_b, bool accumulate) {
  static_assert(std::is_same_v<Elem, __nv_bfloat16> || std::is_same_v<Elem, __half>);
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>)
    asm volatile(GDN_WGMMA_ASM_M64N64("bf16")
                 : GDN_F32(d, 0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                   "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
  else
    asm volatile(GDN_WGMMA_ASM_M64N64("f16")
                 : GDN_F32(d, 0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                   "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
}

// D (64 x 128, fp32) = A (64 x 16, registers) B (16 x 128, shared) + (accumulate ? D : 0).
template <class Elem, bool kTransB>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[16][4], const uint32_t (&a)[4],
                                                 uint64_t desc_b, bool accumulate) {
  static_assert(std::is_same_v<Elem, __nv_bfloat16> || std::is_same_v<Elem, __half>);
  if constexpr (std::is_same_v<Elem, __nv_bfloat16>)
    asm volatile(GDN_WGMMA_ASM_M64N128("bf16")
                 : GDN_F32(d, 0), GDN_F32(d, 8)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                   "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
  else
    asm volatile(GDN_WGMMA_ASM_M64N128("f16")
                 : GDN_F32(d, 0), GDN_F32(d, 8)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),
                   "r"(int32_t(accumulate)), "n"(int32_t(kTransB)));
}

// Both operands from shared memory (descriptors): D (64 x N, fp32) = A (64 x 16) B (16 x N)
// + (accumulate ? D : 0), N = 8 NT (32 or 64). kTransA / kTransB: the operand is stored
// MN-major (m or n contiguous) instead of K-major.
#define GDN_WGMMA_SS(SHAPE, TY, FIRST)                                                  \
  "{\n"                                                                                \
  ".reg .pred p;\n"                                                                    \
  "setp.ne.b32 p, %" FIRST ", 0;\n"                                                    \
  "wgmma.mma_async.sync.aligned." SHAPE ".f32." TY "." TY " {"

template <int NT, class Elem, bool kTransA, bool kTransB>
__device__ __forceinline__ void wgmma_ss(float (&d)[NT][4], uint64_t desc_a, uint64_t desc_b,
                                         bool accumulate) {
  static_assert(std::is_same_v<Elem, __nv_bfloat16> || std::is_same_v<Elem, __half>);
  static_assert(NT == 4 || NT == 8, "m64n32k16 or m64n64k16");
  constexpr bool kBf16 = std::is_same_v<Elem, __nv_bfloat16>;
// One asm statement per shape; TY is the 16-bit type's PTX name.
#define GDN_WGMMA_SS_IN                                                                    \
  "l"(desc_a), "l"(desc_b), "r"(int32_t(accumulate)), "n"(int32_t(kTransA)), "n"(int32_t(kTransB))
#define GDN_WGMMA_SS_N32(TY)                                                               \
  asm volatile(GDN_WGMMA_SS("m64n32k16", TY, "18")                                         \
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "  \
               "%16, %17, p, 1, 1, %19, %20;\n}\n"                                         \
               : GDN_F4(d, 0), GDN_F4(d, 1), GDN_F4(d, 2), GDN_F4(d, 3)                    \
               : GDN_WGMMA_SS_IN)
#define GDN_WGMMA_SS_N64(TY)                                                               \
  asm volatile(GDN_WGMMA_SS("m64n64k16", TY, "34")                                         \
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "   \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "   \
               "%30, %31}, %32, %33, p, 1, 1, %35, %36;\n}\n"                             \
               : GDN_F32(d, 0)                                                             \
               : GDN_WGMMA_SS_IN)
  if constexpr (NT == 4) {
    if constexpr (kBf16)
      GDN_WGMMA_SS_N32("bf16");
    else
      GDN_WGMMA_SS_N32("f16");
  } else {
    if constexpr (kBf16)
      GDN_WGMMA_SS_N64("bf16");
    else
      GDN_WGMMA_SS_N64("f16");
  }
#undef GDN_WGMMA_SS_N64
#undef GDN_WGMMA_SS_N32
#undef GDN_WGMMA_SS_IN
}

#undef GDN_WGMMA_SS
#undef GDN_F32
#undef GDN_F4
#undef GDN_WGMMA_ASM_M64N128
#undef GDN_WGMMA_ASM_M64N64

}  // namespace gdn::fused
