// Encoding of requests and outputs on the worker pipe (see trial_io.hpp).
#include "gdn/tuner/trial_io.hpp"

#include <stdexcept>

namespace gdn::tuner {

namespace {

using wire::Message;

void put_opt(Message& m, const char* key, const std::optional<double>& v) {
  m.set(key, v ? wire::format_double(*v) : std::string());
}
void put_opt(Message& m, const char* key, const std::optional<int>& v) {
  m.set(key, v ? std::to_string(*v) : std::string());
}
std::optional<int> get_opt_int(const Message& m, const char* key) {
  const auto* v = m.find(key);
  if (!v || v->empty()) return std::nullopt;
  return static_cast<int>(wire::parse_integer(*v, key));
}

// PM timeline as parallel columns: one list per field, "" marking a missing value.
std::string column(const std::vector<db::PmSample>& s, std::optional<double> db::PmSample::*f) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    if (const auto& v = s[i].*f) out += wire::format_double(*v);
  }
  return out;
}
std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}
void read_column(const Message& m, const char* key, std::vector<db::PmSample>& s,
                 std::optional<double> db::PmSample::*f) {
  if (s.empty()) return;
  const auto parts = split_commas(m.str(key));
  if (parts.size() != s.size())
    throw std::runtime_error(std::string("protocol: PM column '") + key + "' has " +
                             std::to_string(parts.size()) + " values for " +
                             std::to_string(s.size()) + " samples");
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!parts[i].empty()) s[i].*f = wire::parse_double(parts[i], key);
}

}  // namespace

void put_problem(Message& m, const db::ProblemRecord& p) {
  m.set("p_set", p.shape_set_name)
      .set("p_hash", p.shape_set_hash)
      .set("p_row", static_cast<long long>(p.row_index))
      .set("p_hqk", static_cast<long long>(p.h_qk))
      .set("p_hv", static_cast<long long>(p.h_v))
      .set("p_k", static_cast<long long>(p.k))
      .set("p_v", static_cast<long long>(p.v))
      .set("p_dtype", p.dtype)
      .set("p_batch", static_cast<long long>(p.batch))
      .set("p_nseqs", static_cast<long long>(p.num_seqs))
      .set("p_tokens", static_cast<long long>(p.total_tokens))
      .set("p_maxlen", static_cast<long long>(p.max_seqlen))
      .set("p_seqlens", p.seqlens);
}

db::ProblemRecord get_problem(const Message& m) {
  db::ProblemRecord p;
  p.shape_set_name = m.str("p_set");
  p.shape_set_hash = m.str("p_hash");
  p.row_index = static_cast<int>(m.integer("p_row"));
  p.h_qk = static_cast<int>(m.integer("p_hqk"));
  p.h_v = static_cast<int>(m.integer("p_hv"));
  p.k = static_cast<int>(m.integer("p_k"));
  p.v = static_cast<int>(m.integer("p_v"));
  p.dtype = m.str("p_dtype");
  p.batch = static_cast<int>(m.integer("p_batch"));
  p.num_seqs = m.integer("p_nseqs");
  p.total_tokens = m.integer("p_tokens");
  p.max_seqlen = m.integer("p_maxlen");
  p.seqlens = m.str("p_seqlens");
  return p;
}

std::string problem_shape_key(const db::ProblemRecord& p) {
  return std::to_string(p.h_qk) + "/" + std::to_string(p.h_v) + "/" + std::to_string(p.k) + "/" +
         std::to_string(p.v) + "/" + p.dtype + "/b" + std::to_string(p.batch) + "/" + p.seqlens;
}

Message encode_request(const TrialRequest& r) {
  Message m;
  m.verb = r.kind == RequestKind::Gate ? "gate" : "measure";
  m.set("id", static_cast<long long>(r.id))
      .set("variant", r.variant)
      .set("pass", std::string(db::to_string(r.pass)))
      .set("rung", static_cast<long long>(r.rung))
      .set("metrics", std::string(profiler::to_string(r.metrics)))
      .set("pm", static_cast<long long>(r.pm_sampling ? 1 : 0))
      .set("layout", r.layout)
      .set("warmup", static_cast<long long>(r.precise.warmup_calls))
      .set("min_samples", static_cast<long long>(r.precise.min_samples))
      .set("max_samples", static_cast<long long>(r.precise.max_samples))
      .set("target_spread", r.precise.target_rel_spread)
      .set("time_cap_ms", r.precise.time_cap_ms);
  put_problem(m, r.problem);
  return m;
}

TrialRequest decode_request(const Message& m) {
  TrialRequest r;
  if (m.verb == "gate") r.kind = RequestKind::Gate;
  else if (m.verb == "measure") r.kind = RequestKind::Measure;
  else throw std::runtime_error("protocol: expected a 'gate' or 'measure' request, got '" + m.verb + "'");
  r.id = static_cast<std::uint64_t>(m.integer("id"));
  r.variant = m.str("variant");
  const auto pass = db::parse_pass(m.str("pass"));
  if (!pass) throw std::runtime_error("protocol: field 'pass' expected fwd or bwd, got '" + m.str("pass") + "'");
  r.pass = *pass;
  r.rung = static_cast<int>(m.integer("rung"));
  r.metrics = profiler::parse_metric_set(m.str("metrics"));
  r.pm_sampling = m.integer("pm") != 0;
  r.layout = m.str("layout");
  if (r.layout != "packed" && r.layout != "batched")
    throw std::runtime_error("protocol: field 'layout' expected packed or batched, got '" + r.layout + "'");
  r.precise.warmup_calls = static_cast<int>(m.integer("warmup"));
  r.precise.min_samples = static_cast<int>(m.integer("min_samples"));
  r.precise.max_samples = static_cast<int>(m.integer("max_samples"));
  r.precise.target_rel_spread = m.num("target_spread");
  r.precise.time_cap_ms = m.num("time_cap_ms");
  r.problem = get_problem(m);
  return r;
}

Message encode_output(const TrialOutput& o) {
  const auto& r = o.result;
  const auto& x = r.metrics;
  Message m;
  m.verb = "result";
  m.set("id", static_cast<long long>(o.id))
      .set("outcome", std::string(db::to_string(r.outcome)))
      .set("message", r.message)
      .set("errors", r.errors_json);
  put_opt(m, "max_rel_rms", r.max_rel_rms);
  put_opt(m, "p20", r.latency_p20_ms);
  put_opt(m, "p50", r.latency_p50_ms);
  put_opt(m, "p80", r.latency_p80_ms);
  m.set("count", static_cast<long long>(r.sample_count));
  put_opt(m, "spread", r.rel_spread);
  put_opt(m, "clock_mhz", r.clock_mhz);
  put_opt(m, "m_sm_busy", x.sm_busy_pct);
  put_opt(m, "m_occupancy", x.achieved_occupancy_pct);
  put_opt(m, "m_issue", x.issue_active_pct);
  put_opt(m, "m_dram", x.dram_pct);
  put_opt(m, "m_tensor", x.tensor_pipe_pct);
  put_opt(m, "m_sm_sol", x.sm_throughput_pct);
  put_opt(m, "m_mem_sol", x.memory_sol_pct);
  put_opt(m, "m_gpc_hz", x.gpc_clock_hz);
  m.set("m_reason", x.unavailable_reason);
  put_opt(m, "registers", r.registers);
  put_opt(m, "shared", r.shared_bytes);
  put_opt(m, "local", r.local_bytes);
  put_opt(m, "plan_cp", r.plan.cp_segment_chunks);
  put_opt(m, "plan_overlap", r.plan.prepare_overlap);
  put_opt(m, "plan_first_segment", r.plan.first_segment);
  put_opt(m, "plan_split", r.plan.prepare_split_chunk);
  put_opt(m, "plan_heads", r.plan.prepare_heads);
  put_opt(m, "plan_tail_heads", r.plan.tail_prepare_heads);
  put_opt(m, "plan_fixup", r.plan.fixup_cols);
  put_opt(m, "plan_block_v", r.plan.block_v);
  put_opt(m, "plan_local_heads", r.plan.local_heads);
  put_opt(m, "plan_recompute_cp", r.plan.recompute_cp_chunks);
  put_opt(m, "plan_pass1_beside", r.plan.pass1_beside_recompute);
  put_opt(m, "plan_group_sum_beside", r.plan.group_sum_beside);
  m.set("samples", o.samples_ms);
  std::vector<double> t;
  for (const auto& s : o.pm_timeline) t.push_back(static_cast<double>(s.t_ns));
  m.set("pm_n", static_cast<long long>(o.pm_timeline.size()))
      .set("pm_t", t)
      .set("pm_sm", column(o.pm_timeline, &db::PmSample::sm_busy_pct))
      .set("pm_dram", column(o.pm_timeline, &db::PmSample::dram_pct))
      .set("pm_tensor", column(o.pm_timeline, &db::PmSample::tensor_pipe_pct))
      .set("pm_issue", column(o.pm_timeline, &db::PmSample::issue_active_pct))
      .set("pm_hz", column(o.pm_timeline, &db::PmSample::gpc_clock_hz))
      .set("busy_ms", o.worker_busy_ms)
      .set("exit", static_cast<long long>(o.worker_exiting ? 1 : 0));
  return m;
}

TrialOutput decode_output(const Message& m) {
  if (m.verb != "result") throw std::runtime_error("protocol: expected 'result', got '" + m.verb + "'");
  TrialOutput o;
  auto& r = o.result;
  auto& x = r.metrics;
  o.id = static_cast<std::uint64_t>(m.integer("id"));
  const auto outcome = db::parse_outcome(m.str("outcome"));
  if (!outcome) throw std::runtime_error("protocol: unknown outcome '" + m.str("outcome") + "'");
  r.outcome = *outcome;
  r.message = m.str("message");
  r.errors_json = m.str("errors");
  r.max_rel_rms = m.opt_num("max_rel_rms");
  r.latency_p20_ms = m.opt_num("p20");
  r.latency_p50_ms = m.opt_num("p50");
  r.latency_p80_ms = m.opt_num("p80");
  r.sample_count = static_cast<int>(m.integer("count"));
  r.rel_spread = m.opt_num("spread");
  r.clock_mhz = m.opt_num("clock_mhz");
  x.sm_busy_pct = m.opt_num("m_sm_busy");
  x.achieved_occupancy_pct = m.opt_num("m_occupancy");
  x.issue_active_pct = m.opt_num("m_issue");
  x.dram_pct = m.opt_num("m_dram");
  x.tensor_pipe_pct = m.opt_num("m_tensor");
  x.sm_throughput_pct = m.opt_num("m_sm_sol");
  x.memory_sol_pct = m.opt_num("m_mem_sol");
  x.gpc_clock_hz = m.opt_num("m_gpc_hz");
  x.unavailable_reason = m.str("m_reason");
  r.registers = get_opt_int(m, "registers");
  r.shared_bytes = get_opt_int(m, "shared");
  r.local_bytes = get_opt_int(m, "local");
  r.plan.cp_segment_chunks = get_opt_int(m, "plan_cp");
  r.plan.prepare_overlap = get_opt_int(m, "plan_overlap");
  r.plan.first_segment = get_opt_int(m, "plan_first_segment");
  r.plan.prepare_split_chunk = get_opt_int(m, "plan_split");
  r.plan.prepare_heads = get_opt_int(m, "plan_heads");
  r.plan.tail_prepare_heads = get_opt_int(m, "plan_tail_heads");
  r.plan.fixup_cols = get_opt_int(m, "plan_fixup");
  r.plan.block_v = get_opt_int(m, "plan_block_v");
  r.plan.local_heads = get_opt_int(m, "plan_local_heads");
  r.plan.recompute_cp_chunks = get_opt_int(m, "plan_recompute_cp");
  r.plan.pass1_beside_recompute = get_opt_int(m, "plan_pass1_beside");
  r.plan.group_sum_beside = get_opt_int(m, "plan_group_sum_beside");
  o.samples_ms = m.nums("samples");
  const auto n = static_cast<std::size_t>(m.integer("pm_n"));
  o.pm_timeline.resize(n);
  const auto t = m.nums("pm_t");
  if (t.size() != n) throw std::runtime_error("protocol: pm_t has " + std::to_string(t.size()) +
                                              " values for " + std::to_string(n) + " samples");
  for (std::size_t i = 0; i < n; ++i) {
    o.pm_timeline[i].idx = static_cast<int>(i);
    o.pm_timeline[i].t_ns = static_cast<std::int64_t>(t[i]);
  }
  read_column(m, "pm_sm", o.pm_timeline, &db::PmSample::sm_busy_pct);
  read_column(m, "pm_dram", o.pm_timeline, &db::PmSample::dram_pct);
  read_column(m, "pm_tensor", o.pm_timeline, &db::PmSample::tensor_pipe_pct);
  read_column(m, "pm_issue", o.pm_timeline, &db::PmSample::issue_active_pct);
  read_column(m, "pm_hz", o.pm_timeline, &db::PmSample::gpc_clock_hz);
  o.worker_busy_ms = m.num("busy_ms");
  o.worker_exiting = m.integer("exit") != 0;
  return o;
}

}  // namespace gdn::tuner
