// A register-tiled fp32 matrix product over one thread block, for operands that live in
// shared memory (or anywhere an accessor can read). The staged kernels use it for every
// chunk product: correctness first, CUDA-core FMA with fp32 accumulation.
//
// BlockTile<M, N, NT> gives each of NT threads an RM x RN piece of an M x N result:
//   threads form a TY x 16 grid (TY = NT / 16); thread (ty, tx) owns rows ty + r*TY and
//   columns tx + c*16. Strided ownership keeps a warp's B reads on consecutive words and
//   its A reads on two broadcast words, so padded (stride = cols + 1) tiles have no bank
//   conflicts in either orientation.
// Operands are read through accessors a(i, kk) and b(kk, j), so transposes, masks and
// diagonal scalings are folded into the read instead of materialised.
#pragma once

namespace gdn::staged {

template <int M, int N, int NT>
struct BlockTile {
  static constexpr int TX = 16;
  static constexpr int TY = NT / TX;
  static_assert(NT % TX == 0, "thread count must be a multiple of 16");
  static_assert(M % TY == 0 && N % TX == 0, "tile must divide over the thread grid");
  static constexpr int RM = M / TY;
  static constexpr int RN = N / TX;

  float acc[RM][RN];

  __device__ __forceinline__ int tx() const { return threadIdx.x % TX; }
  __device__ __forceinline__ int ty() const { return threadIdx.x / TX; }
  __device__ __forceinline__ int row(int r) const { return ty() + r * TY; }
  __device__ __forceinline__ int col(int c) const { return tx() + c * TX; }

  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int r = 0; r < RM; ++r)
#pragma unroll
      for (int c = 0; c < RN; ++c) acc[r][c] = 0.f;
  }

  // acc += A (M x depth) * B (depth x N).
  template <class FA, class FB>
  __device__ __forceinline__ void mma(int depth, FA a, FB b) {
#pragma unroll 4
    for (int kk = 0; kk < depth; ++kk) {
      float av[RM], bv[RN];
#pragma unroll
      for (int r = 0; r < RM; ++r) av[r] = a(row(r), kk);
#pragma unroll
      for (int c = 0; c < RN; ++c) bv[c] = b(kk, col(c));
#pragma unroll
      for (int r = 0; r < RM; ++r)
#pragma unroll
        for (int c = 0; c < RN; ++c) acc[r][c] = fmaf(av[r], bv[c], acc[r][c]);
    }
  }

  // f(i, j, value&) for every owned element.
  template <class F>
  __device__ __forceinline__ void each(F f) {
#pragma unroll
    for (int r = 0; r < RM; ++r)
#pragma unroll
      for (int c = 0; c < RN; ++c) f(row(r), col(c), acc[r][c]);
  }

  // Sum over the owned columns of each owned row, reduced across the 16 threads sharing the
  // row (the 16 lanes of a half warp). out[r] is valid in every lane of that half warp.
  template <class F>
  __device__ __forceinline__ void row_sums(F value, float (&out)[RM]) {
#pragma unroll
    for (int r = 0; r < RM; ++r) {
      float s = 0.f;
#pragma unroll
      for (int c = 0; c < RN; ++c) s += value(row(r), col(c), acc[r][c]);
#pragma unroll
      for (int off = TX / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
      out[r] = s;
    }
  }
};

// Shared-memory row-major fp32 matrix view with a padded stride.
struct SmemMat {
  float* p;
  int ld;
  __device__ __forceinline__ float& operator()(int i, int j) const { return p[i * ld + j]; }
};

// Copies / fills: each thread strides over the elements (call between __syncthreads).
template <class F>
__device__ __forceinline__ void block_for(int count, F f) {
  for (int e = threadIdx.x; e < count; e += blockDim.x) f(e);
}

}  // namespace gdn::staged
