#include "gdn/db/writer.hpp"

#include <cmath>
#include <iterator>

#include "row_codec.hpp"
#include "statement.hpp"

namespace gdn::db {

namespace {

[[noreturn]] void invalid(const std::string& what) { throw DbError(DbError::Kind::Invalid, what); }

void require_text(const std::string& value, const char* argument) {
  if (value.empty()) invalid(std::string(argument) + ": expected a non-empty text, got ''");
}

void require_positive(std::int64_t value, const char* argument) {
  if (value <= 0) invalid(std::string(argument) + ": expected > 0, got " + std::to_string(value));
}

void require_non_negative(std::int64_t value, const char* argument) {
  if (value < 0) invalid(std::string(argument) + ": expected >= 0, got " + std::to_string(value));
}

void require_finite(const std::optional<double>& value, const char* argument) {
  if (value && !std::isfinite(*value))
    invalid(std::string(argument) + ": expected a finite number or NULL, got " + std::to_string(*value));
}

constexpr const char* kNowUtc = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";

// The schema version that added each plan field's pin_* column, in gdn::kPlanFields order.
constexpr int kPinColumnVersion[] = {6, 6, 6, 6, 6, 6, 7, 8, 9};
static_assert(std::size(kPinColumnVersion) == gdn::kPlanFields.size(), "one version per plan field");

// The pin_* columns a file of `version` has: the first fields of kPlanFields.
std::size_t pin_columns_of(int version) {
  std::size_t n = 0;
  while (n < gdn::kPlanFields.size() && kPinColumnVersion[n] <= version) ++n;
  return n;
}

}  // namespace

ResultsWriter::ResultsWriter(Database& db) : db_(db) {
  if (db.read_only())
    invalid("ResultsWriter: database '" + db.path() + "' was opened read-only");
}

std::int64_t ResultsWriter::register_device(const DeviceRecord& d) {
  require_text(d.name, "device.name");
  require_text(d.uuid, "device.uuid");
  require_positive(d.sm_count, "device.sm_count");
  constexpr const char* kWhere =
      " FROM devices WHERE uuid = ?1 AND name = ?2 AND sm_count = ?3 AND cc_major = ?4 AND "
      "cc_minor = ?5 AND sm_clock_mhz = ?6 AND mem_clock_mhz = ?7 AND memory_bytes = ?8 AND "
      "l2_bytes = ?9 AND driver_version = ?10 AND cuda_version = ?11";
  auto bind_all = [&](Statement& s) {
    s.bind(1, d.uuid).bind(2, d.name).bind(3, d.sm_count).bind(4, d.cc_major).bind(5, d.cc_minor);
    s.bind(6, d.sm_clock_mhz).bind(7, d.mem_clock_mhz).bind(8, d.memory_bytes);
    s.bind(9, d.l2_bytes).bind(10, d.driver_version).bind(11, d.cuda_version);
  };
  Transaction tx(db_);
  Statement find(db_, std::string("SELECT id") + kWhere);
  bind_all(find);
  if (find.step()) return find.int64(0);
  Statement insert(db_,
                   "INSERT INTO devices (uuid, name, sm_count, cc_major, cc_minor, sm_clock_mhz, "
                   "mem_clock_mhz, memory_bytes, l2_bytes, driver_version, cuda_version) VALUES "
                   "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id");
  bind_all(insert);
  insert.step();
  const std::int64_t id = insert.int64(0);
  insert.run();
  tx.commit();
  return id;
}

std::int64_t ResultsWriter::register_build(const BuildRecord& b) {
  require_text(b.git_sha, "build.git_sha");
  Statement insert(db_,
                   std::string("INSERT INTO builds (git_sha, flags, variant_set, created_at) "
                               "VALUES (?1, ?2, ?3, coalesce(nullif(?4, ''), ") + kNowUtc +
                       ")) ON CONFLICT DO NOTHING");
  insert.bind(1, b.git_sha).bind(2, b.flags).bind(3, b.variant_set).bind(4, b.created_at).run();
  Statement find(db_, "SELECT id FROM builds WHERE git_sha = ?1 AND flags = ?2 AND variant_set = ?3");
  find.bind(1, b.git_sha).bind(2, b.flags).bind(3, b.variant_set);
  find.step();
  return find.int64(0);
}

std::int64_t ResultsWriter::register_variant(const VariantRecord& v) {
  require_text(v.name, "variant.name");
  const std::string pass(to_string(v.pass));
  if (v.config.pass != v.pass)
    invalid("variant '" + v.name + "': pass " + pass + " but its config's pass is " +
            std::string(to_string(v.config.pass)));
  Transaction tx(db_);
  Statement find(db_, "SELECT " + std::string(kVariantColumns) + " FROM variants WHERE name = ?1 AND pass = ?2");
  find.bind(1, v.name).bind(2, pass);
  if (find.step()) {
    const VariantRecord stored = read_variant(find, 0);
    if (!(stored.config == v.config) || !gdn::same_pins(stored.pins, v.pins))
      throw DbError(DbError::Kind::Constraint,
                    "variant '" + v.name + "' (" + pass +
                        ") is already stored with a different config or plan pins: the name must "
                        "determine both");
    return stored.id;
  }
  // A file kept at a version before plans (tests build such files) has the old columns: no
  // pins (a pinned candidate cannot be stored there), consumer_regs and chains_per_cta. One
  // kept at a later version has the pins of the fields up to that version's
  // (kPinColumnVersion); a candidate pinning a later field cannot be stored there.
  const int version = db_.schema_version();
  const bool has_plans = version >= 6;
  const std::size_t pin_columns = pin_columns_of(version);
  for (std::size_t i = pin_columns; i < gdn::kPlanFields.size(); ++i)
    if (v.pins.*gdn::kPlanFields[i].member != GDN_PLAN_RULE)
      invalid("variant '" + v.name + "': the plan pin " + std::string(gdn::kPlanFields[i].name) +
              " needs schema version " + std::to_string(kPinColumnVersion[i]) + ", the file has " +
              std::to_string(version));
  std::string columns = "name, pass, family, block_v, stages, roles, cp_segment_chunks";
  std::string values = "?1, ?2, ?3, ?4, ?5, ?6, ?7";
  for (std::size_t i = 0; i < pin_columns; ++i) {
    columns += ", pin_" + std::string(gdn::kPlanFields[i].name);
    values += ", ?" + std::to_string(8 + i);
  }
  Statement insert(db_, has_plans ? "INSERT INTO main.variants (" + columns + ") VALUES (" + values + ") RETURNING id"
                                  : std::string("INSERT INTO main.variants (name, pass, family, block_v, stages, roles, "
                                                "consumer_regs, cp_segment_chunks, chains_per_cta) VALUES (?1, ?2, "
                                                "?3, ?4, ?5, ?6, 0, ?7, 1) RETURNING id"));
  insert.bind(1, v.name).bind(2, pass).bind(3, family_text(v.config.family));
  insert.bind(4, v.config.block_v).bind(5, v.config.stages).bind(6, roles_text(v.config.roles));
  insert.bind(7, v.config.cp_segment_chunks);
  int column = 8;  // the pin_* columns in gdn::kPlanFields order
  for (std::size_t i = 0; i < pin_columns; ++i) insert.bind(column++, v.pins.*gdn::kPlanFields[i].member);
  insert.step();
  const std::int64_t id = insert.int64(0);
  insert.run();
  tx.commit();
  return id;
}

std::int64_t ResultsWriter::register_problem(const ProblemRecord& p) {
  require_text(p.shape_set_name, "problem.shape_set_name");
  require_text(p.shape_set_hash, "problem.shape_set_hash");
  require_non_negative(p.row_index, "problem.row_index");
  require_positive(p.h_qk, "problem.h_qk");
  require_positive(p.h_v, "problem.h_v");
  require_positive(p.k, "problem.k");
  require_positive(p.v, "problem.v");
  require_positive(p.batch, "problem.batch");
  require_non_negative(p.num_seqs, "problem.num_seqs");
  require_non_negative(p.total_tokens, "problem.total_tokens");
  require_non_negative(p.max_seqlen, "problem.max_seqlen");
  if (p.dtype != "bf16" && p.dtype != "fp16" && p.dtype != "fp32")
    invalid("problem.dtype: expected bf16, fp16 or fp32, got '" + p.dtype + "'");
  Transaction tx(db_);
  Statement find(db_, "SELECT " + std::string(kProblemColumns) +
                          " FROM problems WHERE shape_set_hash = ?1 AND row_index = ?2");
  find.bind(1, p.shape_set_hash).bind(2, p.row_index);
  if (find.step()) {
    ProblemRecord stored = read_problem(find, 0);
    ProblemRecord given = p;
    given.id = stored.id;
    given.shape_set_name = stored.shape_set_name;  // a renamed file with the same content is fine
    const bool same = given.h_qk == stored.h_qk && given.h_v == stored.h_v && given.k == stored.k &&
                      given.v == stored.v && given.dtype == stored.dtype &&
                      given.batch == stored.batch && given.num_seqs == stored.num_seqs &&
                      given.total_tokens == stored.total_tokens &&
                      given.max_seqlen == stored.max_seqlen && given.seqlens == stored.seqlens;
    if (!same)
      throw DbError(DbError::Kind::Constraint,
                    "problem row " + std::to_string(p.row_index) + " of shape set hash " +
                        p.shape_set_hash + " is already stored with different fields");
    return stored.id;
  }
  Statement insert(db_,
                   "INSERT INTO problems (shape_set_name, shape_set_hash, row_index, h_qk, h_v, k, "
                   "v, dtype, batch, num_seqs, total_tokens, max_seqlen, seqlens) VALUES (?1, ?2, "
                   "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id");
  insert.bind(1, p.shape_set_name).bind(2, p.shape_set_hash).bind(3, p.row_index);
  insert.bind(4, p.h_qk).bind(5, p.h_v).bind(6, p.k).bind(7, p.v).bind(8, p.dtype);
  insert.bind(9, p.batch).bind(10, p.num_seqs).bind(11, p.total_tokens);
  insert.bind(12, p.max_seqlen).bind(13, p.seqlens);
  insert.step();
  const std::int64_t id = insert.int64(0);
  insert.run();
  tx.commit();
  return id;
}

std::int64_t ResultsWriter::begin_sweep(const SweepRecord& w) {
  require_positive(w.device_id, "sweep.device_id");
  require_positive(w.build_id, "sweep.build_id");
  require_text(w.strategy, "sweep.strategy");
  require_non_negative(w.budget, "sweep.budget");
  if (w.metrics_level != "none" && w.metrics_level != "basic" && w.metrics_level != "full")
    invalid("sweep.metrics_level: expected none, basic or full, got '" + w.metrics_level + "'");
  const ProtocolRecord& pr = w.protocol;
  require_non_negative(pr.warmup_iters, "sweep.protocol.warmup_iters");
  require_non_negative(pr.min_samples, "sweep.protocol.min_samples");
  if (pr.max_samples < pr.min_samples)
    invalid("sweep.protocol.max_samples: expected >= min_samples (" +
            std::to_string(pr.min_samples) + "), got " + std::to_string(pr.max_samples));
  require_non_negative(pr.l2_flush_bytes, "sweep.protocol.l2_flush_bytes");
  Statement insert(db_,
                   std::string("INSERT INTO sweeps (device_id, build_id, space, shapes, strategy, "
                   "budget, seed, metrics_level, warmup_iters, min_samples, max_samples, "
                   "target_rel_spread, time_cap_ms, l2_flush_bytes, use_graphs, args, status, "
                   "started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                   "?14, ?15, ?16, 'running', coalesce(nullif(?17, ''), ") + kNowUtc +
                       ")) RETURNING id");
  insert.bind(1, w.device_id).bind(2, w.build_id).bind(3, w.space).bind(4, w.shapes);
  insert.bind(5, w.strategy).bind(6, w.budget).bind(7, w.seed).bind(8, w.metrics_level);
  insert.bind(9, pr.warmup_iters).bind(10, pr.min_samples).bind(11, pr.max_samples);
  insert.bind(12, pr.target_rel_spread).bind(13, pr.time_cap_ms).bind(14, pr.l2_flush_bytes);
  insert.bind(15, pr.use_graphs ? 1 : 0).bind(16, w.args).bind(17, w.started_at);
  try {
    insert.step();
  } catch (const DbError& e) {
    throw DbError(e.kind(), "begin_sweep (device " + std::to_string(w.device_id) + ", build " +
                                std::to_string(w.build_id) + "): " + e.what());
  }
  const std::int64_t id = insert.int64(0);
  insert.run();
  return id;
}

void ResultsWriter::mark_shard(const SweepShardRecord& shard) {
  require_positive(shard.sweep_id, "shard.sweep_id");
  if (shard.index < 1 || shard.index > shard.count)
    invalid("shard: expected 1 <= index <= count, got " + std::to_string(shard.index) + "/" +
            std::to_string(shard.count));
  Transaction tx(db_);
  Statement find(db_, "SELECT shard_index, shard_count FROM sweep_shard WHERE sweep_id = ?1");
  find.bind(1, shard.sweep_id);
  if (find.step()) {
    if (find.int64(0) != shard.index || find.int64(1) != shard.count)
      throw DbError(DbError::Kind::Constraint,
                    "sweep " + std::to_string(shard.sweep_id) + " is shard " +
                        std::to_string(find.int64(0)) + "/" + std::to_string(find.int64(1)) +
                        ", not " + std::to_string(shard.index) + "/" + std::to_string(shard.count));
    return;
  }
  Statement insert(db_, "INSERT INTO sweep_shard (sweep_id, shard_index, shard_count) VALUES (?1, ?2, ?3)");
  insert.bind(1, shard.sweep_id).bind(2, shard.index).bind(3, shard.count).run();
  tx.commit();
}

void ResultsWriter::set_sweep_status(std::int64_t sweep_id, SweepStatus status) {
  Statement update(db_, std::string("UPDATE sweeps SET status = ?1, finished_at = CASE WHEN ?1 = "
                                    "'running' THEN NULL ELSE ") + kNowUtc + " END WHERE id = ?2");
  update.bind(1, to_string(status)).bind(2, sweep_id).run();
  if (last_changes(db_) == 0)
    invalid("set_sweep_status: sweep_id " + std::to_string(sweep_id) + " does not exist");
}

InsertedResult ResultsWriter::insert_result(const ResultRecord& r, std::span<const double> samples_ms,
                                            std::span<const PmSample> pm_timeline) {
  if (r.outcome == Outcome::Passed && !r.latency_p50_ms)
    invalid("result.latency_p50_ms: a Passed result needs a measured p50, got NULL");
  if (r.outcome == Outcome::Passed && *r.latency_p50_ms <= 0)
    invalid("result.latency_p50_ms: a Passed result needs a p50 > 0 ms, got " +
            std::to_string(*r.latency_p50_ms));
  require_finite(r.latency_p20_ms, "result.latency_p20_ms");
  require_finite(r.latency_p50_ms, "result.latency_p50_ms");
  require_finite(r.latency_p80_ms, "result.latency_p80_ms");
  require_finite(r.max_rel_rms, "result.max_rel_rms");
  require_non_negative(r.sample_count, "result.sample_count");
  for (std::size_t i = 0; i < samples_ms.size(); ++i)
    if (!std::isfinite(samples_ms[i]) || samples_ms[i] < 0)
      invalid("samples_ms[" + std::to_string(i) + "]: expected a finite time >= 0, got " +
              std::to_string(samples_ms[i]));
  const std::string context = "inserting result (sweep " + std::to_string(r.sweep_id) +
                              ", variant " + std::to_string(r.variant_id) + ", problem " +
                              std::to_string(r.problem_id) + ")";
  Transaction tx(db_);
  InsertedResult out;
  const bool has_plans = db_.schema_version() >= 6;  // a file kept older has no plan columns
  const bool has_recompute_plan = db_.schema_version() >= 7;
  const bool has_pass1_plan = db_.schema_version() >= 8;
  const bool has_group_sum_plan = db_.schema_version() >= 9;
  try {
    // device_id (schema v5) is named only when set, so the writer also fills files of older
    // versions (the migration tests build them with it).
    std::string columns =
        "sweep_id, variant_id, problem_id, outcome, message, max_rel_rms, errors_json, latency_p20_ms, "
        "latency_p50_ms, latency_p80_ms, sample_count, rel_spread, clock_mhz, sm_busy_pct, "
        "achieved_occupancy_pct, issue_active_pct, dram_pct, tensor_pipe_pct, sm_throughput_pct, "
        "memory_sol_pct, gpc_clock_hz, metrics_unavailable_reason, registers, shared_bytes, local_bytes";
    int count = 25;
    if (has_plans) {
      columns += ", plan_cp_segment_chunks, plan_prepare_overlap, plan_first_segment, plan_prepare_split_chunk, "
                 "plan_prepare_heads, plan_tail_prepare_heads, plan_fixup_cols, plan_block_v, plan_local_heads";
      count += 9;
    }
    if (has_recompute_plan) {
      columns += ", plan_recompute_cp_chunks";
      ++count;
    }
    if (has_pass1_plan) {
      columns += ", plan_pass1_beside_recompute";
      ++count;
    }
    if (has_group_sum_plan) {
      columns += ", plan_group_sum_beside";
      ++count;
    }
    const int device_column = r.device_id ? ++count : 0;
    if (r.device_id) columns += ", device_id";
    std::string values;
    for (int i = 1; i <= count; ++i) values += (i > 1 ? ", ?" : "?") + std::to_string(i);
    Statement insert(db_, "INSERT INTO main.results (" + columns + ") VALUES (" + values +
                              ") ON CONFLICT (sweep_id, variant_id, problem_id) DO NOTHING RETURNING id");
    const MetricsRecord& m = r.metrics;
    insert.bind(1, r.sweep_id).bind(2, r.variant_id).bind(3, r.problem_id);
    insert.bind(4, to_string(r.outcome)).bind(5, r.message).bind(6, r.max_rel_rms);
    insert.bind(7, r.errors_json.empty() ? std::string("{}") : r.errors_json);
    insert.bind(8, r.latency_p20_ms).bind(9, r.latency_p50_ms).bind(10, r.latency_p80_ms);
    insert.bind(11, r.sample_count).bind(12, r.rel_spread).bind(13, r.clock_mhz);
    insert.bind(14, m.sm_busy_pct).bind(15, m.achieved_occupancy_pct).bind(16, m.issue_active_pct);
    insert.bind(17, m.dram_pct).bind(18, m.tensor_pipe_pct).bind(19, m.sm_throughput_pct);
    insert.bind(20, m.memory_sol_pct).bind(21, m.gpc_clock_hz).bind(22, m.unavailable_reason);
    insert.bind(23, r.registers).bind(24, r.shared_bytes).bind(25, r.local_bytes);
    if (has_plans) {
      const PlanRecord& plan = r.plan;
      insert.bind(26, plan.cp_segment_chunks).bind(27, plan.prepare_overlap);
      insert.bind(28, plan.first_segment).bind(29, plan.prepare_split_chunk);
      insert.bind(30, plan.prepare_heads).bind(31, plan.tail_prepare_heads);
      insert.bind(32, plan.fixup_cols).bind(33, plan.block_v).bind(34, plan.local_heads);
    }
    if (has_recompute_plan) insert.bind(35, r.plan.recompute_cp_chunks);
    if (has_pass1_plan) insert.bind(36, r.plan.pass1_beside_recompute);
    if (has_group_sum_plan) insert.bind(37, r.plan.group_sum_beside);
    if (r.device_id) insert.bind(device_column, *r.device_id);
    if (!insert.step()) {
      Statement find(db_, "SELECT id FROM results WHERE sweep_id = ?1 AND variant_id = ?2 AND problem_id = ?3");
      find.bind(1, r.sweep_id).bind(2, r.variant_id).bind(3, r.problem_id).step();
      return InsertedResult{find.int64(0), true};  // tx rolls back: nothing was written
    }
    out.result_id = insert.int64(0);
    insert.run();
    Statement sample(db_, "INSERT INTO samples (result_id, idx, ms) VALUES (?1, ?2, ?3)");
    for (std::size_t i = 0; i < samples_ms.size(); ++i) {
      sample.reset();
      sample.bind(1, out.result_id).bind(2, static_cast<std::int64_t>(i)).bind(3, samples_ms[i]).run();
    }
    Statement pm(db_,
                 "INSERT INTO pm_samples (result_id, idx, t_ns, sm_busy_pct, dram_pct, "
                 "tensor_pipe_pct, issue_active_pct, gpc_clock_hz) VALUES (?1, ?2, ?3, ?4, ?5, "
                 "?6, ?7, ?8)");
    for (const PmSample& p : pm_timeline) {
      pm.reset();
      pm.bind(1, out.result_id).bind(2, p.idx).bind(3, p.t_ns).bind(4, p.sm_busy_pct);
      pm.bind(5, p.dram_pct).bind(6, p.tensor_pipe_pct).bind(7, p.issue_active_pct);
      pm.bind(8, p.gpc_clock_hz).run();
    }
  } catch (const DbError& e) {
    throw DbError(e.kind(), context + ": " + e.what());
  }
  tx.commit();
  return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> ResultsWriter::completed_pairs(
    std::int64_t sweep_id) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  Statement s(db_, "SELECT variant_id, problem_id FROM results WHERE sweep_id = ?1 ORDER BY id");
  s.bind(1, sweep_id);
  while (s.step()) pairs.emplace_back(s.int64(0), s.int64(1));
  return pairs;
}

bool ResultsWriter::has_result(std::int64_t sweep_id, std::int64_t variant_id,
                               std::int64_t problem_id) const {
  Statement s(db_, "SELECT 1 FROM results WHERE sweep_id = ?1 AND variant_id = ?2 AND problem_id = ?3");
  s.bind(1, sweep_id).bind(2, variant_id).bind(3, problem_id);
  return s.step();
}

}  // namespace gdn::db
