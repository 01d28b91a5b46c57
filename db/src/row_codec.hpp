// Private to db/src: the one place that maps record structs to column lists and back, so the
// writer and every reader agree on column order.
#pragma once

#include <string>
#include <string_view>

#include "gdn/db/records.hpp"
#include "statement.hpp"

namespace gdn::db {

// Column lists in record-field order; readers prefix them with a table alias.
std::string prefixed(std::string_view alias, std::string_view columns);
constexpr int column_count(std::string_view columns) {
  int n = 1;
  for (char c : columns) n += c == ',';
  return n;
}

inline constexpr std::string_view kDeviceColumns =
    "id, name, uuid, sm_count, cc_major, cc_minor, sm_clock_mhz, mem_clock_mhz, memory_bytes, "
    "l2_bytes, driver_version, cuda_version";
inline constexpr std::string_view kBuildColumns = "id, git_sha, flags, variant_set, created_at";
inline constexpr std::string_view kVariantColumns =
    "id, name, pass, family, block_v, stages, roles, cp_segment_chunks, pin_prepare_overlap, "
    "pin_cp_first_segment, pin_prepare_split, pin_prepare_heads, pin_fixup_cols, pin_local_heads, "
    "pin_recompute_cp_chunks, pin_pass1_beside_recompute, pin_group_sum_beside";
inline constexpr std::string_view kProblemColumns =
    "id, shape_set_name, shape_set_hash, row_index, h_qk, h_v, k, v, dtype, batch, num_seqs, "
    "total_tokens, max_seqlen, seqlens";
inline constexpr std::string_view kSweepColumns =
    "id, device_id, build_id, space, shapes, strategy, budget, seed, metrics_level, "
    "warmup_iters, min_samples, max_samples, target_rel_spread, time_cap_ms, l2_flush_bytes, "
    "use_graphs, args, status, started_at, finished_at";
inline constexpr std::string_view kResultColumns =
    "id, sweep_id, variant_id, problem_id, outcome, message, max_rel_rms, errors_json, "
    "latency_p20_ms, latency_p50_ms, latency_p80_ms, sample_count, rel_spread, clock_mhz, "
    "sm_busy_pct, achieved_occupancy_pct, issue_active_pct, dram_pct, tensor_pipe_pct, "
    "sm_throughput_pct, memory_sol_pct, gpc_clock_hz, metrics_unavailable_reason, registers, "
    "shared_bytes, local_bytes, plan_cp_segment_chunks, plan_prepare_overlap, plan_first_segment, "
    "plan_prepare_split_chunk, plan_prepare_heads, plan_tail_prepare_heads, plan_fixup_cols, "
    "plan_block_v, plan_local_heads, plan_recompute_cp_chunks, plan_pass1_beside_recompute, "
    "plan_group_sum_beside";
inline constexpr std::string_view kPmColumns =
    "idx, t_ns, sm_busy_pct, dram_pct, tensor_pipe_pct, issue_active_pct, gpc_clock_hz";

// Read a record from consecutive columns starting at `first`.
DeviceRecord read_device(const Statement& s, int first);
BuildRecord read_build(const Statement& s, int first);
VariantRecord read_variant(const Statement& s, int first);
ProblemRecord read_problem(const Statement& s, int first);
SweepRecord read_sweep(const Statement& s, int first);
ResultRecord read_result(const Statement& s, int first);
PmSample read_pm_sample(const Statement& s, int first);  // idx, t_ns, 5 metrics

// Config enums as stored.
std::string_view family_text(gdn::Family f);
std::string_view roles_text(gdn::WarpRoles r);

}  // namespace gdn::db
