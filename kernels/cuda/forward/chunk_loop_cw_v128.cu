// The column-warp fused chunk loop for 128-column V-blocks (bf16 and fp16 instantiations).
#include "forward/chunk_loop_cw.cuh"

namespace gdn::fused {
GDN_FUSED_INSTANTIATE_CHUNK_LOOP_CW(128)
}  // namespace gdn::fused
