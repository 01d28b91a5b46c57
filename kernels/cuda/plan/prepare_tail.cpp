// The prepare-tail rule (plan/prepare_tail.hpp).
#include "plan/prepare_tail.hpp"

namespace gdn::fused {

int64_t prepare_tail_begin(const KernelConfig& c, int64_t num_seqs, int64_t max_chunks, int64_t hv,
                           int sms, OverlapMode overlap, PrepareTailSetting setting) {
  const int64_t cp = c.cp_segment_chunks;
  const bool can = c.family == Family::Fused && c.roles == WarpRoles::ColumnWarps &&
                   c.block_v == 64 && cp > 0 && overlap == OverlapMode::None && num_seqs == 1 &&
                   max_chunks > cp;
  if (!can || setting == PrepareTailSetting::Off) return 0;
  const int64_t tail_begin = (max_chunks + cp - 1) / cp * cp - cp;  // the last segment's first chunk
  if (setting == PrepareTailSetting::On) return tail_begin;
  // Two 64-column loop CTAs per SM (forward/params.cuh, cw_ctas_per_sm).
  const int64_t wave = 2 * int64_t(sms > 0 ? sms : 132);
  const int64_t ctas = first_loop_ctas(c, num_seqs, max_chunks, hv);
  if (ctas <= 0) return 0;
  const int64_t free_slots = (ctas + wave - 1) / wave * wave - ctas;  // in pass 1's last wave
  return free_slots * kTailMinFreeSlotsDivisor >= wave ? tail_begin : 0;
}

}  // namespace gdn::fused
