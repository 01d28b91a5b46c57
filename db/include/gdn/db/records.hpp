// Typed rows of the results database: one struct per table, the same field names as the
// columns. Front ends and the tuner speak these structs; only db/src knows SQL.
// Ids are SQLite rowids; 0 means "not stored yet". Nullable columns are std::optional.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gdn/launch_plan.hpp"
#include "gdn/variant.hpp"
#include "gdn/variant_config.hpp"

namespace gdn::db {

// What happened to one (variant, problem). Persisted as text (CHECK-constrained column) so a
// failed config is not retried and a crash is explained by its message.
enum class Outcome : std::uint8_t {
  Passed = 0,
  Incorrect,
  CompileRejected,
  LaunchFailed,
  Timeout,
  Unsupported,
  Crashed,
};
inline constexpr std::size_t kOutcomeCount = 7;
inline constexpr std::array<Outcome, kOutcomeCount> kAllOutcomes = {
    Outcome::Passed,      Outcome::Incorrect, Outcome::CompileRejected, Outcome::LaunchFailed,
    Outcome::Timeout,     Outcome::Unsupported, Outcome::Crashed};
std::string_view to_string(Outcome o);
// Exact, case-sensitive names as above; nullopt for anything else.
std::optional<Outcome> parse_outcome(std::string_view text);

enum class SweepStatus : std::uint8_t { Running = 0, Finished, Interrupted };
std::string_view to_string(SweepStatus s);
std::optional<SweepStatus> parse_sweep_status(std::string_view text);

// "fwd" / "bwd" in the database.
std::string_view to_string(gdn::Pass p);
std::optional<gdn::Pass> parse_pass(std::string_view text);

// The GPU a sweep ran on, read from the device (never literals). A change of driver or clocks
// is a different row, so provenance stays exact.
struct DeviceRecord {
  std::int64_t id = 0;
  std::string name;            // "NVIDIA H200"
  std::string uuid;            // "GPU-…"
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_clock_mhz = 0;        // max SM clock
  int mem_clock_mhz = 0;       // max memory clock
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::string driver_version;  // "580.65.06"
  std::string cuda_version;    // runtime, "13.0"
};
// Another GPU of the same kind: every field but id and uuid equal (model, clocks, memory,
// driver, runtime). A sweep resumed on one records it per result (ResultRecord::device_id).
bool same_device_kind(const DeviceRecord& a, const DeviceRecord& b);

struct BuildRecord {
  std::int64_t id = 0;
  std::string git_sha;         // "unknown" outside a git checkout, never empty
  std::string flags;           // compiler flags / CMake options that shape the kernels
  std::string variant_set;     // GDN_VARIANTS value the build used
  std::string created_at;      // ISO-8601 UTC, filled by the database when empty
};

// One candidate of a sweep: a compiled variant (typed columns of gdn::KernelConfig) and the
// launch-plan fields it pins (gdn_launch_options; GDN_PLAN_RULE: the default rule). The name
// is the variant's procedural name followed by the pins' suffix (gdn::pins_suffix):
// gdn_fwd_sm90_fused_v64_s2_cw_cp16, gdn_fwd_sm90_fused_v64_s2_cw_cp16+ov2+ph4.
struct VariantRecord {
  std::int64_t id = 0;
  std::string name;            // unique per pass
  gdn::Pass pass = gdn::Pass::Forward;  // == config.pass
  gdn::KernelConfig config;
  gdn_launch_options pins = gdn::kRulePins;

  // The compiled variant's name: `name` without the pins' suffix.
  std::string variant_name() const { return name.substr(0, name.find('+')); }
};

// The launch plan one result's call ran with (gdn/launch_plan.hpp), one column per field of
// either pass's plan; nullopt where that pass's plan has no such field, and for results
// recorded before plans were (schema version 4 and older).
struct PlanRecord {
  std::optional<int> cp_segment_chunks;
  std::optional<int> prepare_overlap;      // gdn::OverlapMode as its number
  std::optional<int> first_segment;        // 0 / 1
  std::optional<int> prepare_split_chunk;  // 0: no split
  std::optional<int> prepare_heads;
  std::optional<int> tail_prepare_heads;
  std::optional<int> fixup_cols;           // 0: no CP
  std::optional<int> block_v;              // the backward's V-block
  std::optional<int> local_heads;          // the backward's value heads per local-gradient CTA
  std::optional<int> recompute_cp_chunks;  // the backward's forward recompute's CP segment; 0: none
  std::optional<int> pass1_beside_recompute;  // the backward's CP pass 1 beside the recompute: 0, 1
  std::optional<int> group_sum_beside;  // the backward's group sum beside the fused kernel: 0, 1
  friend bool operator==(const PlanRecord&, const PlanRecord&) = default;
};
inline PlanRecord plan_record(const gdn::ForwardPlan& p) {
  PlanRecord r;
  r.cp_segment_chunks = p.cp_segment_chunks;
  r.prepare_overlap = static_cast<int>(p.prepare_overlap);
  r.first_segment = p.first_segment_in_pass1 ? 1 : 0;
  r.prepare_split_chunk = static_cast<int>(p.prepare_split_chunk);
  r.prepare_heads = p.prepare_heads;
  r.tail_prepare_heads = p.tail_prepare_heads;
  r.fixup_cols = p.fixup_cols;
  return r;
}
inline PlanRecord plan_record(const gdn::BackwardPlan& p) {
  PlanRecord r;
  r.cp_segment_chunks = p.cp_segment_chunks;
  r.prepare_heads = p.prepare_heads;
  r.block_v = p.block_v;
  r.fixup_cols = p.fixup_cols;
  r.local_heads = p.local_heads;
  r.recompute_cp_chunks = p.recompute_cp_chunks;
  if (p.cp_segment_chunks > 0) r.pass1_beside_recompute = p.pass1_beside_recompute ? 1 : 0;
  r.group_sum_beside = p.group_sum_beside ? 1 : 0;
  return r;
}

// One row of a named shape set (scripts/shapes/*.csv). dtype is "bf16", "fp16" or "fp32".
struct ProblemRecord {
  std::int64_t id = 0;
  std::string shape_set_name;
  std::string shape_set_hash;  // content hash of the CSV: same name + new hash = new problems
  int row_index = 0;
  int h_qk = 0;
  int h_v = 0;
  int k = 0;
  int v = 0;
  std::string dtype = "bf16";
  int batch = 1;
  std::int64_t num_seqs = 1;
  std::int64_t total_tokens = 0;
  std::int64_t max_seqlen = 0;
  std::string seqlens;         // comma-separated sequence lengths, as in the CSV
};

// The measurement protocol, stored with every sweep (and so with every result of it).
struct ProtocolRecord {
  int warmup_iters = 0;
  int min_samples = 0;
  int max_samples = 0;
  double target_rel_spread = 0;  // stop when (p80 - p20) / p50 falls below this
  double time_cap_ms = 0;        // per (variant, problem) timing budget
  std::int64_t l2_flush_bytes = 0;
  bool use_graphs = false;
};

struct SweepRecord {
  std::int64_t id = 0;
  std::int64_t device_id = 0;
  std::int64_t build_id = 0;
  std::string space;           // search-space name or file
  std::string shapes;          // shape-set name or file
  std::string strategy;        // exhaustive | random | halving
  std::int64_t budget = 0;     // 0: no budget
  std::int64_t seed = 0;
  std::string metrics_level;   // none | basic | full
  ProtocolRecord protocol;
  std::string args;            // the command line, verbatim
  SweepStatus status = SweepStatus::Running;
  std::string started_at;      // ISO-8601 UTC, filled by the database when empty
  std::string finished_at;     // empty while running
};

// Schema v5: the part of a sharded sweep one sweep measures (`gdnlab sweep --shard I/N`).
struct SweepShardRecord {
  std::int64_t sweep_id = 0;
  int index = 1;  // 1-based
  int count = 1;
};

// Schema v5: one shard merged into a sweep of a merged database (`gdnlab merge`): where its
// results came from and the device that measured them (results.merged_shard_id points here).
struct MergedShardRecord {
  std::int64_t id = 0;
  std::int64_t sweep_id = 0;         // the merged sweep
  int index = 1;
  int count = 1;
  std::int64_t device_id = 0;        // the device the shard ran on
  std::string source_path;           // the shard database, as named to the merge
  std::int64_t source_sweep_id = 0;  // its sweep in that database
  std::string source_started_at;     // with source_sweep_id: which run of the shard this is
  SweepStatus source_status = SweepStatus::Running;  // at the last merge
  std::string merged_at;             // ISO-8601 UTC of the last merge that read it
};

// CUPTI range-profiler figures of one result. All NULL (nullopt) with a reason when the
// profiler was unavailable, busy or not asked for.
struct MetricsRecord {
  std::optional<double> sm_busy_pct;
  std::optional<double> achieved_occupancy_pct;
  std::optional<double> issue_active_pct;
  std::optional<double> dram_pct;
  std::optional<double> tensor_pipe_pct;
  std::optional<double> sm_throughput_pct;  // --metrics full
  std::optional<double> memory_sol_pct;     // --metrics full
  std::optional<double> gpc_clock_hz;
  std::string unavailable_reason;           // "" when the metrics were collected
};

struct ResultRecord {
  std::int64_t id = 0;
  std::int64_t sweep_id = 0;
  std::int64_t variant_id = 0;
  std::int64_t problem_id = 0;
  Outcome outcome = Outcome::Passed;
  std::string message;                   // why it failed / notes; "" when nothing to say
  std::optional<double> max_rel_rms;     // worst relative RMS error over the outputs
  std::string errors_json;               // {"o": {"rel_rms": …, "max_abs": …}, "ht": …}
  std::optional<double> latency_p20_ms;
  std::optional<double> latency_p50_ms;
  std::optional<double> latency_p80_ms;
  int sample_count = 0;
  std::optional<double> rel_spread;      // (p80 - p20) / p50
  std::optional<double> clock_mhz;       // SM clock observed while timing
  MetricsRecord metrics;
  std::optional<int> registers;
  std::optional<int> shared_bytes;
  std::optional<int> local_bytes;        // spills (schema v2)
  PlanRecord plan;                       // schema v6
  // Schema v5: the GPU that measured this result when it is not the sweep's own (a sweep
  // resumed on another GPU of the same kind, as a requeued Slurm task is). Written by
  // insert_result; read with result_devices() (merge.hpp), so files before v5 read unchanged.
  std::optional<std::int64_t> device_id;
};

// One point of a PM-sampling timeline.
struct PmSample {
  int idx = 0;
  std::int64_t t_ns = 0;                 // since the first sample
  std::optional<double> sm_busy_pct;
  std::optional<double> dram_pct;
  std::optional<double> tensor_pipe_pct;
  std::optional<double> issue_active_pct;
  std::optional<double> gpc_clock_hz;
};

}  // namespace gdn::db
