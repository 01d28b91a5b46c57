// The column-warp fused chunk loop for 64-column V-blocks (bf16 and fp16 instantiations).
#include "forward/chunk_loop_cw.cuh"

namespace gdn::fused {
GDN_FUSED_INSTANTIATE_CHUNK_LOOP_CW(64)
}  // namespace gdn::fused
