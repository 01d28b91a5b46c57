// The producer/consumer fused chunk loop for 32-column V-blocks (bf16 and fp16 instantiations).
#include "forward/chunk_loop_pc.cuh"

namespace gdn::fused {
GDN_FUSED_INSTANTIATE_CHUNK_LOOP_PC(32)
}  // namespace gdn::fused
