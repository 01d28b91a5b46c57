// The fused forward's one-launch table builder (forward/tables.cu) against the per-table builders
// (common/chunk_table.cu, cp/fixup.cu) and against the tables computed on the host: the same chunk
// table, ready counts (and the exclusive overlap's SM claims after them) zeroed, the same
// segment table, bit for bit, for ragged batches with
// empty sequences, more sequences than one scan pass (1024), B x T without cu_seqlens, 32- and
// 64-bit offsets, with and without CP, on both sides of the one-warp builder's limits (32
// sequences, 2048 chunks); and a problem too large for one block, which takes the per-table
// builders.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "device_harness.hpp"
#include "forward/kernels.cuh"
#include "staged/run.cuh"

namespace gdn::fused {
namespace {

using gdn::testing::gpu::DeviceBuffer;
using gdn::testing::gpu::hopper_available;

struct Tables {
  std::vector<int64_t> chunk_first, seg_first;
  std::vector<ChunkInfo> table;
  std::vector<int> ready;  // max_chunks counts, then staged::kClaimInts claims
  std::vector<Segment> segs;
};

template <class T>
std::vector<T> to_host(const DeviceBuffer& b, size_t n) {
  std::vector<T> out(n);
  if (n > 0) EXPECT_EQ(cudaMemcpy(out.data(), b.get(), n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

// Builds the tables on the device by `path`, every buffer first filled with 0x5a bytes (so
// that an entry left unwritten shows).
Tables build(const gdn_problem& p, int seg_chunks, TablesPath path) {
  const Dims d = staged::make_dims(p);
  const int64_t max_segs = seg_chunks > 0 ? max_segments(d, seg_chunks) : 0;
  const auto filled = [](size_t bytes) {
    DeviceBuffer b(bytes > 0 ? bytes : 1);
    EXPECT_EQ(cudaMemset(b.get(), 0x5a, b.bytes()), cudaSuccess);
    return b;
  };
  DeviceBuffer chunk_first = filled((d.num_seqs + 1) * sizeof(int64_t));
  DeviceBuffer table = filled(d.max_chunks * sizeof(ChunkInfo));
  DeviceBuffer ready = filled((d.max_chunks + staged::kClaimInts) * sizeof(int));
  DeviceBuffer seg_first = filled((d.num_seqs + 1) * sizeof(int64_t));
  DeviceBuffer segs = filled(max_segs * sizeof(Segment));
  EXPECT_EQ(build_tables(p, d, seg_chunks, static_cast<int64_t*>(chunk_first.get()),
                         static_cast<ChunkInfo*>(table.get()), static_cast<int*>(ready.get()),
                         seg_chunks > 0 ? static_cast<int64_t*>(seg_first.get()) : nullptr,
                         seg_chunks > 0 ? static_cast<Segment*>(segs.get()) : nullptr, max_segs,
                         nullptr, path),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Tables t;
  t.chunk_first = to_host<int64_t>(chunk_first, d.num_seqs + 1);
  t.table = to_host<ChunkInfo>(table, d.max_chunks);
  t.ready = to_host<int>(ready, d.max_chunks + staged::kClaimInts);
  if (seg_chunks > 0) {
    t.seg_first = to_host<int64_t>(seg_first, d.num_seqs + 1);
    t.segs = to_host<Segment>(segs, max_segs);
  }
  return t;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The chunk table on the host from the sequence lengths.
void expect_chunk_table(const Tables& t, const std::vector<int64_t>& starts) {
  const size_t n_seqs = starts.size() - 1;
  size_t c = 0;
  for (size_t n = 0; n < n_seqs; ++n) {
    ASSERT_EQ(t.chunk_first[n], static_cast<int64_t>(c)) << "sequence " << n;
    for (int64_t tok = starts[n]; tok < starts[n + 1]; tok += 64, ++c) {
      ASSERT_LT(c, t.table.size());
      EXPECT_EQ(t.table[c].tok_begin, tok) << "chunk " << c;
      EXPECT_EQ(t.table[c].seq, static_cast<int32_t>(n)) << "chunk " << c;
      EXPECT_EQ(t.table[c].len, static_cast<int32_t>(std::min<int64_t>(64, starts[n + 1] - tok)))
          << "chunk " << c;
    }
  }
  EXPECT_EQ(t.chunk_first[n_seqs], static_cast<int64_t>(c));
  for (size_t e = c; e < t.table.size(); ++e) EXPECT_EQ(t.table[e].len, 0) << "unused entry " << e;
  for (size_t e = 0; e < t.ready.size(); ++e) ASSERT_EQ(t.ready[e], 0) << "ready " << e;
}

// expect_one_warp: whether the one-launch path is the one-warp builder (cp 0 and cp 16 alike).
void check_problem(const std::vector<int64_t>& starts, bool int64_offsets, bool expect_one_block,
                   bool expect_one_warp = false) {
  const int64_t n_seqs = static_cast<int64_t>(starts.size()) - 1;
  std::vector<int32_t> starts32(starts.begin(), starts.end());
  DeviceBuffer cu = int64_offsets ? DeviceBuffer::from(starts) : DeviceBuffer::from(starts32);
  gdn_problem p{};
  gdn_problem_init(&p, 1, starts.back(), 2, 4, 128, 128);
  p.cu_seqlens = cu.get();
  p.cu_seqlens_dtype = int64_offsets ? GDN_INT64 : GDN_INT32;
  p.num_seqs = n_seqs;
  for (int cp : {0, 16}) {
    SCOPED_TRACE(::testing::Message() << n_seqs << " sequences, " << starts.back() << " tokens, cp "
                                    << cp << (int64_offsets ? ", int64" : ", int32"));
    const Dims d = staged::make_dims(p);
    const int64_t max_segs = cp > 0 ? max_segments(d, cp) : 0;
    EXPECT_EQ(tables_fit_one_block(d.max_chunks, cp, max_segs), expect_one_block);
    EXPECT_EQ(tables_fit_one_warp(n_seqs, d.max_chunks, cp, max_segs), expect_one_warp);
    const Tables a = build(p, cp, TablesPath::Auto), b = build(p, cp, TablesPath::PerTable);
    expect_chunk_table(a, starts);
    EXPECT_TRUE(same_bytes(a.chunk_first, b.chunk_first));
    EXPECT_TRUE(same_bytes(a.table, b.table));
    EXPECT_TRUE(same_bytes(a.ready, b.ready));
    EXPECT_TRUE(same_bytes(a.seg_first, b.seg_first));
    EXPECT_TRUE(same_bytes(a.segs, b.segs));
    if (cp > 0) {  // every chunk of every sequence in exactly one segment, in order
      int64_t used = 0;
      for (const Segment& s : a.segs)
        if (s.flags & Segment::kUsed) used += s.chunk_end - s.chunk_begin;
      EXPECT_EQ(used, a.chunk_first[n_seqs]);
    }
  }
}

TEST(FusedTables, OneLaunchEqualsThePerTableBuilders) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  // Ragged, with empty sequences first, inside and last.
  check_problem({0, 0, 100, 100, 1000, 1064, 1065, 1065}, false, true, true);
  check_problem({0, 0, 100, 100, 1000, 1064, 1065, 1065}, true, true, true);
  // 32 ragged sequences (the one-warp builder's most), then 33 (the block's); one sequence of
  // 2048 chunks (the warp's most), then of 2049.
  std::mt19937 rng(7);
  std::vector<int64_t> ragged{0};
  for (int n = 0; n < 33; ++n) ragged.push_back(ragged.back() + static_cast<int64_t>(rng() % 700));
  check_problem(std::vector<int64_t>(ragged.begin(), ragged.end() - 1), false, true, true);
  check_problem(ragged, false, true, false);
  check_problem({0, int64_t(64) * 2048}, true, true, true);
  check_problem({0, int64_t(64) * 2048 + 1}, true, true, false);
  // 1500 sequences of 0..300 tokens: the scans take two passes of 1024.
  std::vector<int64_t> many{0};
  for (int n = 0; n < 1500; ++n) many.push_back(many.back() + static_cast<int64_t>(rng() % 301));
  check_problem(many, false, true);
  // One sequence of 9000 chunks: more entries than one block fills; the per-table builders.
  check_problem({0, int64_t(64) * 9000 - 5}, true, false);
}

TEST(FusedTables, WithoutCuSeqlensSequencesAreBTimesT) {
  if (!hopper_available()) GTEST_SKIP() << "skipped: no CUDA device";
  gdn_problem p{};
  gdn_problem_init(&p, 3, 200, 2, 4, 128, 128);
  for (int cp : {0, 2}) {
    const Tables a = build(p, cp, TablesPath::Auto), b = build(p, cp, TablesPath::PerTable);
    expect_chunk_table(a, {0, 200, 400, 600});
    EXPECT_TRUE(same_bytes(a.table, b.table));
    EXPECT_TRUE(same_bytes(a.segs, b.segs));
    EXPECT_TRUE(same_bytes(a.seg_first, b.seg_first));
  }
}

}  // namespace
}  // namespace gdn::fused
