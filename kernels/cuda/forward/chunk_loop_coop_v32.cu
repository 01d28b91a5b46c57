// The fused chunk loop for 32-column V-blocks (bf16 and fp16 instantiations).
#include "forward/chunk_loop_coop.cuh"

namespace gdn::fused {
GDN_FUSED_INSTANTIATE_CHUNK_LOOP(32)
}  // namespace gdn::fused
