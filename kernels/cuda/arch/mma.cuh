// Thin PTX wrappers of the fused family: warp-level tensor-core products (mma.sync m16n8k16,
// 16-bit inputs, fp32 accumulators), ldmatrix fragment loads from shared memory and cp.async
// copies global -> shared. Fragment layouts follow the PTX ISA ("Matrix fragments for
// mma.m16n8k16"); with g = lane / 4 and t = lane % 4:
//   A (16 x 16, row-major): a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B (16 x 8):             b0 (k 2t..2t+1, n g)              b1 (k 2t+8.., n g)
//   C (16 x 8, fp32):       c0 c1 (g, 2t..2t+1)               c2 c3 (g+8, 2t..2t+1)
// The 16-bit type is a template parameter (bf16 or fp16, the dtype of q, k, v): every
// intermediate that feeds a product (bf16/fp16 copy of the state, W', V_new) uses it too.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace gdn::fused {

template <class Elem>
struct ElemOps;

template <>
struct ElemOps<__nv_bfloat16> {
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ __forceinline__ static float2 unpack(uint32_t x) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&x));
  }
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct ElemOps<__half> {
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ __forceinline__ static float2 unpack(uint32_t x) {
    return __half22float2(*reinterpret_cast<__half2*>(&x));
  }
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// ldmatrix.x4.trans from a shared-memory byte address.
__device__ __forceinline__ void ldsm_x4_trans_at(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// stmatrix .x4 .trans: four 8 x 8 16-bit matrices from mma C-fragment pairs (r[m]: lane's
// row lane / 4, columns 2 (lane % 4), + 1 of matrix m), each stored transposed: lane l gives the
// shared byte address of row l % 8 of matrix l / 8, which receives that matrix's column l % 8.
__device__ __forceinline__ void stsm_x4_trans_at(uint32_t addr, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// A 16-bit matrix in shared memory, row-major with a padded stride `ld` (elements; rows of
// 16-byte multiples plus 16 bytes of padding keep ldmatrix free of bank conflicts).
struct SmemTile16 {
  uint16_t* p;
  int ld;
  __device__ __forceinline__ uint16_t* at(int r, int c) const { return p + r * ld + c; }
  __device__ __forceinline__ uint32_t& pair(int r, int c) const {  // c even
    return *reinterpret_cast<uint32_t*>(p + r * ld + c);
  }
};

// A 16-bit matrix in shared memory with kCols columns (64 or 128: rows of 128 or 256 bytes),
// unpadded, its 16-byte column groups XOR-swizzled by the row: element (r, c) lives in group
// (c / 8) ^ (r % 8) of row r. Eight consecutive rows at one logical group land in eight
// distinct 16-byte bank groups, so ldmatrix (plain or .trans) and the 16-byte cp.async fills
// are free of bank conflicts without the padding SmemTile16 spends (which keeps the
// column-warp loop's 2-stage ring at two CTAs per SM).
template <int kCols>
struct SwizzledTile16 {
  static_assert(kCols == 64 || kCols == 128, "rows of 128 or 256 bytes");
  uint16_t* p;
  // Element offset of (r, c); rows r + 8 m add the constant 8 m kCols, so accesses to one
  // column across rows 8 apart share a base.
  __device__ __forceinline__ static int offset(int r, int c) {
    return r * kCols + (((c >> 3) ^ (r & 7)) << 3) + (c & 7);
  }
  static constexpr size_t bytes(int rows) { return size_t(rows) * kCols * 2; }
  static constexpr uint32_t kRowBytes = kCols * 2;

  // The same placement as shared-memory byte addresses, for tiles at 256-byte aligned bases:
  // with a lane's row start R (a multiple of the row bytes) and its physical group
  // g = (c / 8) ^ (r % 8) < row bytes / 16, the address is R + 16 g = R ^ 16 g. For fragments
  // at row r0 (multiple of 8) and column c0 (multiple of 16), r % 8 is the lane's own and
  // c / 8 = c0 / 8 | the lane's group bit, so the address is ((lane base) ^ 2 c0) + r0 * row
  // bytes: one XOR per column step and an immediate offset per row step.
  __device__ __forceinline__ uint32_t addr() const { return smem_addr(p); }
  // ldmatrix lanes of load_b_nk / load_a_trans: row lane % 8 + 8 (lane / 16), group (lane / 8) % 2.
  __device__ __forceinline__ uint32_t frag_nk(int r0, int c0) const {
    const int lane = threadIdx.x % 32;
    const uint32_t base = (addr() + (lane % 8 + 8 * (lane / 16)) * kRowBytes) ^
                          ((((lane / 8) % 2) ^ (lane % 8)) << 4);
    return (base ^ (2 * c0)) + r0 * kRowBytes;
  }
};

// The fragment loads below take any tile whose at(r, c) places 8 consecutive columns from a
// multiple of 8 in 16 contiguous bytes (SmemTile16, or wgmma's swizzled WgTile16).

// A fragment of rows [r0, r0+16) x cols [k0, k0+16) of a row-major tile.
template <class Tile>
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const Tile& t, int r0, int k0) {
  const int lane = threadIdx.x % 32;
  ldsm_x4(a, t.at(r0 + lane % 16, k0 + (lane / 16) * 8));
}

// A fragment of A = X^T, where the tile stores X (rows = the product's depth k, columns = m):
// rows m0..m0+15 of A, depth k0..k0+15.
template <class Tile>
__device__ __forceinline__ void load_a_trans(uint32_t (&a)[4], const Tile& t, int m0, int k0) {
  const int lane = threadIdx.x % 32;
  ldsm_x4_trans(a, t.at(k0 + lane % 8 + (lane / 16) * 8, m0 + ((lane / 8) % 2) * 8));
}

// B fragments of two n-tiles (n0..n0+7 -> b[0], b[1]; n0+8..n0+15 -> b[2], b[3]) at depth
// k0..k0+15, when the tile stores B row-major (rows = depth k, columns = n).
template <class Tile>
__device__ __forceinline__ void load_b_kn(uint32_t (&b)[4], const Tile& t, int k0, int n0) {
  const int lane = threadIdx.x % 32;
  ldsm_x4_trans(b, t.at(k0 + lane % 8 + ((lane / 8) % 2) * 8, n0 + (lane / 16) * 8));
}

// Same, when the tile stores B^T (rows = n, columns = depth k), e.g. K for Q K^T.
template <class Tile>
__device__ __forceinline__ void load_b_nk(uint32_t (&b)[4], const Tile& t, int k0, int n0) {
  const int lane = threadIdx.x % 32;
  ldsm_x4(b, t.at(n0 + lane % 8 + (lane / 16) * 8, k0 + ((lane / 8) % 2) * 8));
}

// 16-byte asynchronous copy; src_bytes = 0 zero-fills the destination (rows past a chunk's
// end) without reading the source.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}

// 4-byte asynchronous copy (a strided fp32 column, one element per thread).
__device__ __forceinline__ void cp_async_4(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_addr(dst)), "l"(src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Waits until at most `pending` committed groups are still in flight (0 or 1).
__device__ __forceinline__ void cp_async_wait(int pending) {
  if (pending == 0)
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  else
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
}

}  // namespace gdn::fused
