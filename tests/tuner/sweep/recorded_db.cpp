#include "recorded_db.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sqlite3.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "gdn/db/writer.hpp"
#include "gdn/profiler/stats.hpp"
#include "gdn/variant_config.hpp"

namespace gdn::tuner::testing {

std::string temp_dir(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() /
             ("gdnlab_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

int run_command(const std::string& command, std::string& output) {
  output.clear();
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p)) output += buf.data();
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw std::runtime_error("opening '" + path + "': " + why);
  }
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string why = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("running '" + sql + "' on '" + path + "': " + why);
}

TmpfsMount::TmpfsMount(const std::string& dir, const std::string& size) : dir_(dir) {
  std::filesystem::create_directories(dir);
  std::string out;
  if (run_command("mount -t tmpfs -o size=" + size + " gdnlab-test " + dir, out) == 0) {
    mounted_ = true;
  } else {
    why_ = "cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): " + out;
  }
}

TmpfsMount::~TmpfsMount() {
  std::string out;
  if (mounted_) run_command("umount -l " + dir_, out);
}

bool TmpfsMount::remount_read_only() {
  std::string out;
  const bool ok = run_command("mount -o remount,ro " + dir_, out) == 0;
  if (!ok) why_ = "cannot remount the tmpfs read-only: " + out;
  return ok;
}

namespace {

db::DeviceRecord fixture_device() {
  db::DeviceRecord dev;
  dev.name = "Recorded GPU (test fixture)";
  dev.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  dev.sm_count = 132;
  dev.cc_major = 9;
  dev.sm_clock_mhz = 1980;
  dev.mem_clock_mhz = 3201;
  dev.memory_bytes = 1ll << 37;
  dev.l2_bytes = 50ll << 20;
  dev.driver_version = "13.0";
  dev.cuda_version = "13.0";
  return dev;
}

std::int64_t begin_fixture_sweep(db::ResultsWriter& w) {
  db::BuildRecord build;
  build.git_sha = "fixture";
  build.flags = "test";
  build.variant_set = "default";
  db::SweepRecord sweep;
  sweep.device_id = w.register_device(fixture_device());
  sweep.build_id = w.register_build(build);
  sweep.space = "default";
  sweep.shapes = "fixture";
  sweep.strategy = "exhaustive";
  sweep.metrics_level = "basic";
  sweep.args = "recorded fixture";
  return w.begin_sweep(sweep);
}

// A Passed result of `p50` ms (40 samples around it).
void insert_passed(db::ResultsWriter& w, db::ResultRecord r, double p50) {
  std::vector<double> samples;
  for (int s = 0; s < 40; ++s) samples.push_back(p50 * (1.0 + 1e-3 * (s % 5 - 2)));
  const auto q = profiler::quantiles(samples);
  r.outcome = db::Outcome::Passed;
  r.max_rel_rms = 1e-3;
  r.latency_p20_ms = q.p20;
  r.latency_p50_ms = q.p50;
  r.latency_p80_ms = q.p80;
  r.rel_spread = profiler::relative_spread(samples);
  r.sample_count = static_cast<int>(samples.size());
  w.insert_result(r, samples);
}

}  // namespace

RecordedPlans make_recorded_plans_db(const std::string& path) {
  std::filesystem::remove(path);
  auto database = db::Database::open(path);
  db::ResultsWriter w(database);
  RecordedPlans out;
  out.path = path;
  const std::int64_t sweep = begin_fixture_sweep(w);
  db::ProblemRecord p;
  p.shape_set_name = "fixture";
  p.shape_set_hash = "00fixture00plan0";
  p.h_qk = 2;
  p.h_v = 8;
  p.k = p.v = 128;
  p.total_tokens = p.max_seqlen = 8192;
  p.seqlens = "8192";
  const std::int64_t problem = w.register_problem(p);
  KernelConfig fwd;
  fwd.family = Family::Fused;
  fwd.roles = WarpRoles::ColumnWarps;
  fwd.cp_segment_chunks = 16;
  db::VariantRecord rule{0, config_name(fwd), Pass::Forward, fwd};
  db::VariantRecord pinned = rule;
  pinned.pins.prepare_heads = 2;
  pinned.name += "+ph2";
  KernelConfig bwd;
  bwd.pass = Pass::Backward;
  db::VariantRecord backward{0, config_name(bwd), Pass::Backward, bwd};
  out.rule_candidate = rule.name;
  out.pinned_candidate = pinned.name;
  out.backward = backward.name;
  db::ResultRecord r;
  r.sweep_id = sweep;
  r.problem_id = problem;
  r.plan.cp_segment_chunks = 16;
  r.plan.prepare_heads = 4;
  r.variant_id = w.register_variant(rule);
  insert_passed(w, r, 0.20);
  r.plan.prepare_heads = 2;
  r.variant_id = w.register_variant(pinned);
  insert_passed(w, r, 0.15);
  r.plan = db::PlanRecord{};
  r.plan.block_v = 64;
  r.plan.prepare_heads = 4;
  r.variant_id = w.register_variant(backward);
  insert_passed(w, r, 3.0);
  w.set_sweep_status(sweep, db::SweepStatus::Finished);
  return out;
}

RecordedDb make_recorded_db(const std::string& path) {
  std::filesystem::remove(path);
  auto database = db::Database::open(path);
  db::ResultsWriter w(database);
  RecordedDb out;
  out.path = path;
  out.sweep_id = begin_fixture_sweep(w);

  std::vector<std::int64_t> variant_ids;
  for (int bv : {32, 64, 128})
    for (int stages : {2, 3}) {
      KernelConfig c;
      c.family = Family::Fused;
      c.block_v = bv;
      c.stages = stages;
      db::VariantRecord v{0, config_name(c), Pass::Forward, c};
      variant_ids.push_back(w.register_variant(v));
      out.variants.push_back(v.name);
    }
  {
    KernelConfig bad;  // invalid: the staged family has no ring
    bad.stages = 3;
    db::VariantRecord v{0, config_name(bad), Pass::Forward, bad};
    variant_ids.push_back(w.register_variant(v));
    out.variants.push_back(v.name);
  }
  out.incorrect_variant = out.variants[1];
  out.unsupported_variant = out.variants[4];
  out.crashed_variant = out.variants[5];
  out.rejected_variant = out.variants[6];

  // Two families (heads 2/8 and 4/16), two layouts each.
  struct Shape { int hqk, hv; const char* seqlens; std::int64_t n, total, maxlen; };
  const Shape shapes[] = {{2, 8, "1000", 1, 1000, 1000}, {2, 8, "300,700", 2, 1000, 700},
                          {4, 16, "4096", 1, 4096, 4096}, {4, 16, "100,28,131", 3, 259, 131}};
  std::vector<std::int64_t> problem_ids;
  for (int i = 0; i < 4; ++i) {
    db::ProblemRecord p;
    p.shape_set_name = "fixture";
    p.shape_set_hash = "00fixture00hash0";
    p.row_index = i;
    p.h_qk = shapes[i].hqk;
    p.h_v = shapes[i].hv;
    p.k = p.v = 128;
    p.num_seqs = shapes[i].n;
    p.total_tokens = shapes[i].total;
    p.max_seqlen = shapes[i].maxlen;
    p.seqlens = shapes[i].seqlens;
    problem_ids.push_back(w.register_problem(p));
  }
  out.problems = 4;

  std::mt19937_64 rng(1234);
  std::normal_distribution<double> noise(0.0, 0.004);
  out.p50.assign(out.variants.size(), std::vector<double>(4, 0.0));
  for (std::size_t v = 0; v < out.variants.size(); ++v)
    for (int p = 0; p < 4; ++p) {
      db::ResultRecord r;
      r.sweep_id = out.sweep_id;
      r.variant_id = variant_ids[v];
      r.problem_id = problem_ids[p];
      std::vector<double> samples;
      std::vector<db::PmSample> pm;
      const bool first_family = p < 2;
      if (out.variants[v] == out.incorrect_variant && first_family) {
        r.outcome = db::Outcome::Incorrect;
        r.max_rel_rms = 0.31;
        r.errors_json = R"({"o": {"rel_rms": 0.31, "max_abs": 2.5}, "ht": {"rel_rms": 0.2, "max_abs": 1.0}})";
        r.message = "relative RMS error o 0.31";
      } else if (out.variants[v] == out.rejected_variant) {
        r.outcome = db::Outcome::CompileRejected;
        r.message = "invalid config: the staged family has no ring, roles, register split or chain knobs";
      } else if (out.variants[v] == out.crashed_variant && p == 2) {
        r.outcome = db::Outcome::Crashed;
        r.message = "worker died during the measurement: killed by signal 11 (Segmentation fault)";
      } else if (out.variants[v] == out.unsupported_variant && p == 3) {
        r.outcome = db::Outcome::Unsupported;
        r.message = "block_v 128 with stages 2 needs 3 sequences or fewer";  // any recorded reason
      } else {
        r.outcome = db::Outcome::Passed;
        r.max_rel_rms = 1.5e-3 + 1e-4 * static_cast<double>(v);
        r.errors_json = R"({"o": {"rel_rms": 0.0015, "max_abs": 0.01}, "ht": {"rel_rms": 0.001, "max_abs": 0.01}})";
        // A clear ranking per problem that differs between problems: variant (v + p) % 6 is fastest.
        const double base = 0.05 * (p + 1) * (1.0 + 0.15 * static_cast<double>((v + static_cast<std::size_t>(p)) % 6));
        for (int s = 0; s < 40; ++s) samples.push_back(base * (1.0 + noise(rng)));
        const auto q = profiler::quantiles(samples);
        r.latency_p20_ms = q.p20;
        r.latency_p50_ms = q.p50;
        r.latency_p80_ms = q.p80;
        r.rel_spread = profiler::relative_spread(samples);
        r.sample_count = static_cast<int>(samples.size());
        r.clock_mhz = 1980;
        r.metrics.sm_busy_pct = 80 + static_cast<double>(v);
        r.metrics.achieved_occupancy_pct = 40;
        r.metrics.issue_active_pct = 30;
        r.metrics.dram_pct = 50;
        r.metrics.tensor_pipe_pct = 20 + static_cast<double>(v);
        r.metrics.sm_throughput_pct = 60;
        r.metrics.memory_sol_pct = 55;
        r.metrics.gpc_clock_hz = 1.98e9;
        r.registers = 168;
        r.shared_bytes = 100000;
        r.local_bytes = 0;
        for (int i = 0; i < 5; ++i) pm.push_back({i, 100000ll * i, 80.0, 50.0, 20.0, 30.0, 1.98e9});
        out.p50[v][p] = q.p50;
      }
      w.insert_result(r, samples, pm);
    }
  w.set_sweep_status(out.sweep_id, db::SweepStatus::Finished);
  return out;
}

}  // namespace gdn::tuner::testing
