#include "row_codec.hpp"

#include "gdn/db/database.hpp"

namespace gdn::db {

std::string prefixed(std::string_view alias, std::string_view columns) {
  std::string out;
  std::size_t start = 0;
  while (start <= columns.size()) {
    std::size_t end = columns.find(',', start);
    if (end == std::string_view::npos) end = columns.size();
    std::string_view name = columns.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    if (!out.empty()) out += ", ";
    out.append(alias).append(".").append(name);
    start = end + 1;
  }
  return out;
}

std::string_view family_text(gdn::Family f) { return f == gdn::Family::Staged ? "staged" : "fused"; }
std::string_view roles_text(gdn::WarpRoles r) {
  switch (r) {
    case gdn::WarpRoles::Cooperative: return "cooperative";
    case gdn::WarpRoles::ProducerConsumer: return "producer_consumer";
    case gdn::WarpRoles::ColumnWarps: return "column_warps";  // schema version 3 on
  }
  return "unknown";  // not a WarpRoles value: the roles CHECK refuses it at insert
}

namespace {
[[noreturn]] void bad_stored(std::string_view column, const std::string& value) {
  throw DbError(DbError::Kind::Other,
                "stored value of " + std::string(column) + " is not recognised: '" + value + "'");
}
}  // namespace

DeviceRecord read_device(const Statement& s, int c) {
  DeviceRecord d;
  d.id = s.int64(c + 0);
  d.name = s.text(c + 1);
  d.uuid = s.text(c + 2);
  d.sm_count = s.integer(c + 3);
  d.cc_major = s.integer(c + 4);
  d.cc_minor = s.integer(c + 5);
  d.sm_clock_mhz = s.integer(c + 6);
  d.mem_clock_mhz = s.integer(c + 7);
  d.memory_bytes = s.int64(c + 8);
  d.l2_bytes = s.int64(c + 9);
  d.driver_version = s.text(c + 10);
  d.cuda_version = s.text(c + 11);
  return d;
}

BuildRecord read_build(const Statement& s, int c) {
  return BuildRecord{s.int64(c), s.text(c + 1), s.text(c + 2), s.text(c + 3), s.text(c + 4)};
}

VariantRecord read_variant(const Statement& s, int c) {
  VariantRecord v;
  v.id = s.int64(c + 0);
  v.name = s.text(c + 1);
  const auto pass = parse_pass(s.text(c + 2));
  if (!pass) bad_stored("variants.pass", s.text(c + 2));
  v.pass = *pass;
  v.config.pass = *pass;
  const std::string family = s.text(c + 3);
  if (family == "staged") v.config.family = gdn::Family::Staged;
  else if (family == "fused") v.config.family = gdn::Family::Fused;
  else bad_stored("variants.family", family);
  v.config.block_v = s.integer(c + 4);
  v.config.stages = s.integer(c + 5);
  const std::string roles = s.text(c + 6);
  if (roles == "cooperative") v.config.roles = gdn::WarpRoles::Cooperative;
  else if (roles == "producer_consumer") v.config.roles = gdn::WarpRoles::ProducerConsumer;
  else if (roles == "column_warps") v.config.roles = gdn::WarpRoles::ColumnWarps;
  else bad_stored("variants.roles", roles);
  v.config.cp_segment_chunks = s.integer(c + 7);
  // The pins in gdn::kPlanFields order, the order of the pin_* columns.
  int column = c + 8;
  for (const gdn::PlanField& f : gdn::kPlanFields) v.pins.*f.member = s.integer(column++);
  return v;
}

ProblemRecord read_problem(const Statement& s, int c) {
  ProblemRecord p;
  p.id = s.int64(c + 0);
  p.shape_set_name = s.text(c + 1);
  p.shape_set_hash = s.text(c + 2);
  p.row_index = s.integer(c + 3);
  p.h_qk = s.integer(c + 4);
  p.h_v = s.integer(c + 5);
  p.k = s.integer(c + 6);
  p.v = s.integer(c + 7);
  p.dtype = s.text(c + 8);
  p.batch = s.integer(c + 9);
  p.num_seqs = s.int64(c + 10);
  p.total_tokens = s.int64(c + 11);
  p.max_seqlen = s.int64(c + 12);
  p.seqlens = s.text(c + 13);
  return p;
}

SweepRecord read_sweep(const Statement& s, int c) {
  SweepRecord w;
  w.id = s.int64(c + 0);
  w.device_id = s.int64(c + 1);
  w.build_id = s.int64(c + 2);
  w.space = s.text(c + 3);
  w.shapes = s.text(c + 4);
  w.strategy = s.text(c + 5);
  w.budget = s.int64(c + 6);
  w.seed = s.int64(c + 7);
  w.metrics_level = s.text(c + 8);
  w.protocol.warmup_iters = s.integer(c + 9);
  w.protocol.min_samples = s.integer(c + 10);
  w.protocol.max_samples = s.integer(c + 11);
  w.protocol.target_rel_spread = s.real(c + 12);
  w.protocol.time_cap_ms = s.real(c + 13);
  w.protocol.l2_flush_bytes = s.int64(c + 14);
  w.protocol.use_graphs = s.int64(c + 15) != 0;
  w.args = s.text(c + 16);
  const auto status = parse_sweep_status(s.text(c + 17));
  if (!status) bad_stored("sweeps.status", s.text(c + 17));
  w.status = *status;
  w.started_at = s.text(c + 18);
  w.finished_at = s.text(c + 19);
  return w;
}

ResultRecord read_result(const Statement& s, int c) {
  ResultRecord r;
  r.id = s.int64(c + 0);
  r.sweep_id = s.int64(c + 1);
  r.variant_id = s.int64(c + 2);
  r.problem_id = s.int64(c + 3);
  const auto outcome = parse_outcome(s.text(c + 4));
  if (!outcome) bad_stored("results.outcome", s.text(c + 4));
  r.outcome = *outcome;
  r.message = s.text(c + 5);
  r.max_rel_rms = s.opt_real(c + 6);
  r.errors_json = s.text(c + 7);
  r.latency_p20_ms = s.opt_real(c + 8);
  r.latency_p50_ms = s.opt_real(c + 9);
  r.latency_p80_ms = s.opt_real(c + 10);
  r.sample_count = s.integer(c + 11);
  r.rel_spread = s.opt_real(c + 12);
  r.clock_mhz = s.opt_real(c + 13);
  r.metrics.sm_busy_pct = s.opt_real(c + 14);
  r.metrics.achieved_occupancy_pct = s.opt_real(c + 15);
  r.metrics.issue_active_pct = s.opt_real(c + 16);
  r.metrics.dram_pct = s.opt_real(c + 17);
  r.metrics.tensor_pipe_pct = s.opt_real(c + 18);
  r.metrics.sm_throughput_pct = s.opt_real(c + 19);
  r.metrics.memory_sol_pct = s.opt_real(c + 20);
  r.metrics.gpc_clock_hz = s.opt_real(c + 21);
  r.metrics.unavailable_reason = s.text(c + 22);
  r.registers = s.opt_int(c + 23);
  r.shared_bytes = s.opt_int(c + 24);
  r.local_bytes = s.opt_int(c + 25);
  r.plan.cp_segment_chunks = s.opt_int(c + 26);
  r.plan.prepare_overlap = s.opt_int(c + 27);
  r.plan.first_segment = s.opt_int(c + 28);
  r.plan.prepare_split_chunk = s.opt_int(c + 29);
  r.plan.prepare_heads = s.opt_int(c + 30);
  r.plan.tail_prepare_heads = s.opt_int(c + 31);
  r.plan.fixup_cols = s.opt_int(c + 32);
  r.plan.block_v = s.opt_int(c + 33);
  r.plan.local_heads = s.opt_int(c + 34);
  r.plan.recompute_cp_chunks = s.opt_int(c + 35);
  r.plan.pass1_beside_recompute = s.opt_int(c + 36);
  r.plan.group_sum_beside = s.opt_int(c + 37);
  return r;
}

PmSample read_pm_sample(const Statement& s, int c) {
  PmSample p;
  p.idx = s.integer(c + 0);
  p.t_ns = s.int64(c + 1);
  p.sm_busy_pct = s.opt_real(c + 2);
  p.dram_pct = s.opt_real(c + 3);
  p.tensor_pipe_pct = s.opt_real(c + 4);
  p.issue_active_pct = s.opt_real(c + 5);
  p.gpc_clock_hz = s.opt_real(c + 6);
  return p;
}

}  // namespace gdn::db
