// Host-side TMA descriptors (tensor maps): the [tokens, heads, 128] 16-bit inputs q, k, v, as
// the column-warp chunk loop loads them (boxes of 64 tokens x 1 head x 64 columns, landing as
// 128-byte swizzled 64 x 64 tiles, the canonical wgmma operand layout; rows past the tensor's
// end arrive as zeros), and the CP transfer [rows, 2 K] fp32 as the fix-up loads it (boxes of
// rows x columns landing unswizzled, row after row).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace gdn::fused {

// Tokens a map may span: the kernels pass a token's index as a signed 32-bit box coordinate.
inline constexpr int64_t kMaxTmaTokens = 0x7fffffff;

// The tile box of the maps: 64 columns (128 bytes: the swizzle span) x 1 head x 64 tokens.
inline constexpr int kTmaBoxCols = 64;
inline constexpr int kTmaBoxRows = 64;

// Encodes map for base viewed as [tokens, heads, 128] 16-bit (bf16 or fp16) elements.
// cudaErrorInvalidValue when the driver's encoder is unavailable or rejects the view (base not
// 16-byte aligned), or tokens exceed kMaxTmaTokens (the variants refuse such problems).
cudaError_t encode_token_tile_map(CUtensorMap* map, const void* base, int heads, int64_t tokens,
                                  bool bf16);

// Encodes map for base viewed as [rows, cols] 16-bit (row-major; cols 64 or 128), in boxes of
// box_rows x 64 columns landing 128-byte swizzled (the canonical wgmma operand layout).
// cudaErrorInvalidValue when the encoder is unavailable or rejects the view (base not 16-byte
// aligned, box_rows past 256, rows past 2^31 - 1: the kernels pass a row as a signed 32-bit
// coordinate).
cudaError_t encode_rows16_map(CUtensorMap* map, const void* base, int64_t rows, int cols,
                              int box_rows, bool bf16);

// Encodes map for base viewed as [rows, cols] fp32 (row-major, rows cols * 4 bytes apart), in
// boxes of box_rows x box_cols (columns past cols arrive as zeros). cudaErrorInvalidValue when
// the encoder is unavailable or rejects the view (base not 16-byte aligned, a box side past 256,
// box_cols * 4 not a multiple of 16, rows past 2^31 - 1).
cudaError_t encode_f32_tile_map(CUtensorMap* map, const float* base, int64_t rows, int cols,
                                int box_rows, int box_cols);

}  // namespace gdn::fused
