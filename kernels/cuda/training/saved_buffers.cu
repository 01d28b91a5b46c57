// The saved block's layout (saved_buffers.cuh) and size (saved_size.hpp).
#include "staged/run.cuh"
#include "training/saved_buffers.cuh"

namespace gdn::fused {

int64_t max_segments(const Dims& d, int cp) { return (d.max_chunks + cp - 1) / cp + d.num_seqs; }

CpBuffers carve_cp(staged::WorkspaceCarver& c, const Dims& d, int cp) {
  CpBuffers b;
  b.max_segs = max_segments(d, cp);
  b.seg_first = c.take<int64_t>(d.num_seqs + 1);
  b.segs = c.take<Segment>(b.max_segs);
  b.transfer = c.take<float>(b.max_segs * d.Hv * kK * 2 * kV);
  b.starts = c.take<float>(b.max_segs * d.Hv * kK * kV);
  return b;
}

SavedBuffers carve_saved(staged::WorkspaceCarver& c, const Dims& d, int segment_chunks) {
  const int64_t chunk_heads = d.max_chunks * d.Hv;
  SavedBuffers s;
  s.gcum = c.take<float>(d.Ttot * d.Hv);
  s.t16 = c.take<uint16_t>(chunk_heads * kC * kC);
  s.t16_rows = c.take<uint16_t>(chunk_heads * kC * kC);
  s.gate_ef = c.take<float>(chunk_heads * 3 * kC);
  if (segment_chunks > 0) {
    s.segment_chunks = segment_chunks;
    s.cp_bufs = carve_cp(c, d, segment_chunks);
  }
  return s;
}

size_t saved_bytes(const gdn_problem& p, int segment_chunks) {
  staged::WorkspaceCarver carver{nullptr};
  carve_saved(carver, staged::make_dims(p), segment_chunks);
  return carver.used;
}

}  // namespace gdn::fused
