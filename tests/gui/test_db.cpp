#include "test_db.hpp"

#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "gdn/db/writer.hpp"

namespace gdn::gui::testing {
namespace {

db::ProblemRecord test_problem(int j) {
  db::ProblemRecord p;
  p.shape_set_name = "gui-test";
  p.shape_set_hash = "gui-test-hash-1";
  p.row_index = j;
  p.h_qk = (j % 2 == 0) ? 16 : 32;
  p.h_v = 32;
  p.k = 128;
  p.v = 128;
  p.dtype = "bf16";
  p.num_seqs = std::int64_t{1} << (j % 4);
  p.max_seqlen = std::int64_t{1024} << (j / 2 % 6);
  p.total_tokens = p.num_seqs * p.max_seqlen;
  p.seqlens.clear();
  for (std::int64_t s = 0; s < p.num_seqs; ++s)
    p.seqlens += (s ? "," : "") + std::to_string(p.max_seqlen);
  return p;
}

db::DeviceRecord test_device() {
  db::DeviceRecord d;
  d.name = "synthetic test GPU";  // test data: never mistaken for a measured H200
  d.uuid = "GPU-00000000-test";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_clock_mhz = 1980;
  d.mem_clock_mhz = 3201;
  d.memory_bytes = 150'000'000'000;
  d.l2_bytes = 60 * 1024 * 1024;
  d.driver_version = "580.65.06";
  d.cuda_version = "13.0";
  return d;
}

// Deterministic pseudo-random in [0, 1): the noise of the synthetic samples.
double unit_noise(std::uint64_t seed) {
  seed ^= seed >> 33;
  seed *= 0xff51afd7ed558ccdULL;
  seed ^= seed >> 33;
  seed *= 0xc4ceb9fe1a85ec53ULL;
  seed ^= seed >> 33;
  return double(seed >> 11) / double(1ULL << 53);
}

}  // namespace

gdn::KernelConfig test_config(int i) {
  gdn::KernelConfig c;
  if (i % 6 == 5) {  // every sixth is a staged variant
    c.family = gdn::Family::Staged;
    c.block_v = 32 << (i / 6 % 3);
    c.cp_segment_chunks = (i / 18 % 2) ? 8 : 0;
    return c;
  }
  c.family = gdn::Family::Fused;
  c.block_v = 32 << (i % 3);
  c.stages = 2 + (i / 3 % 2);
  constexpr gdn::WarpRoles kRoles[] = {gdn::WarpRoles::Cooperative,
                                       gdn::WarpRoles::ProducerConsumer,
                                       gdn::WarpRoles::ColumnWarps};
  c.roles = kRoles[i / 2 % 3];
  c.cp_segment_chunks = (i / 11 % 4) == 0 ? 0 : (4 << (i / 11 % 4));
  return c;
}

std::string test_variant_name(const gdn::KernelConfig& c, int i) {
  std::string name = c.family == gdn::Family::Fused ? "gdn_fwd_sm90_fused" : "gdn_fwd_sm90_staged";
  name += "_v" + std::to_string(c.block_v);
  if (c.family == gdn::Family::Fused) {
    name += "_s" + std::to_string(c.stages);
    name += c.roles == gdn::WarpRoles::ProducerConsumer ? std::string("_pc")
            : c.roles == gdn::WarpRoles::ColumnWarps    ? std::string("_cw")
                                                        : std::string("_coop");
  }
  name += "_cp" + std::to_string(c.cp_segment_chunks);
  return name + "_t" + std::to_string(i);  // the synthetic space may repeat a config
}

double synthetic_latency_ms(int i, const db::ProblemRecord& p, int sweep_index) {
  const gdn::KernelConfig c = test_config(i);
  const double work = double(p.total_tokens) * p.h_v * p.k * p.v * 4e-12;  // ~ms scale
  double factor = c.family == gdn::Family::Staged ? 2.2 : 1.0;
  factor *= c.block_v == 64 ? 1.0 : (c.block_v == 128 ? 1.12 : 1.25);
  factor *= c.stages == 3 ? 0.94 : 1.0;
  factor *= c.roles == gdn::WarpRoles::ProducerConsumer ? 0.9
            : c.roles == gdn::WarpRoles::ColumnWarps    ? 0.85
                                                        : 1.0;
  factor *= (c.cp_segment_chunks != 0 && p.num_seqs == 1) ? 0.8 : 1.0;
  factor *= 1.0 + 0.05 * unit_noise(std::uint64_t(i) * 7919 + std::uint64_t(p.row_index));
  if (sweep_index == 1 && p.total_tokens >= 8192) factor *= 0.95;  // the "new build" is faster
  return 0.01 + work * factor;
}

std::int64_t register_test_problem(db::Database& db, int row_index) {
  return db::ResultsWriter(db).register_problem(test_problem(row_index));
}

std::int64_t append_result(db::Database& db, std::int64_t sweep_id, std::int64_t variant_id,
                           std::int64_t problem_id, double p50_ms) {
  db::ResultsWriter writer(db);
  db::ResultRecord r;
  r.sweep_id = sweep_id;
  r.variant_id = variant_id;
  r.problem_id = problem_id;
  r.outcome = db::Outcome::Passed;
  r.max_rel_rms = 1e-3;
  r.latency_p20_ms = p50_ms * 0.99;
  r.latency_p50_ms = p50_ms;
  r.latency_p80_ms = p50_ms * 1.01;
  r.sample_count = 3;
  r.rel_spread = 0.02;
  const double samples[] = {p50_ms * 0.99, p50_ms, p50_ms * 1.01};
  return writer.insert_result(r, samples).result_id;
}

TestDbIds make_test_db(const std::string& path, const TestDbSpec& spec) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  db::Database db = db::Database::open(path);
  // Test data only: the writer commits each result on its own (as a sweep does); without
  // syncing, 100k of them take seconds instead of minutes.
  db.exec("PRAGMA synchronous = OFF");
  db::ResultsWriter writer(db);
  TestDbIds ids;
  const std::int64_t device_id = writer.register_device(test_device());

  std::vector<db::ProblemRecord> problems;
  for (int j = 0; j < spec.problems; ++j) {
    problems.push_back(test_problem(j));
    problems.back().id = writer.register_problem(problems.back());
    ids.problems.push_back(problems.back().id);
  }
  for (int i = 0; i < spec.variants; ++i) {
    db::VariantRecord v;
    v.config = test_config(i);
    v.name = test_variant_name(v.config, i);
    v.pass = gdn::Pass::Forward;
    ids.variants.push_back(writer.register_variant(v));
  }

  for (int s = 0; s < spec.sweeps; ++s) {
    db::BuildRecord build;
    build.git_sha = s == 0 ? "1111111111aaaaaaaaaa" : "2222222222bbbbbbbbbb";
    build.flags = "-O3 -arch=sm_90a";
    build.variant_set = "default";
    db::SweepRecord sweep;
    sweep.device_id = device_id;
    sweep.build_id = writer.register_build(build);
    sweep.space = "test-space";
    sweep.shapes = "gui-test";
    sweep.strategy = "exhaustive";
    sweep.seed = 7;
    sweep.metrics_level = "basic";
    sweep.protocol = {5, 10, 200, 0.02, 500.0, 256 << 20, true};
    sweep.args = "gdnlab sweep --space test-space --shapes gui-test (generated by tests/gui)";
    const std::int64_t sweep_id = writer.begin_sweep(sweep);
    ids.sweeps.push_back(sweep_id);

    for (int i = 0; i < spec.variants; ++i) {
      for (int j = 0; j < spec.problems; ++j) {
        const db::ProblemRecord& p = problems[static_cast<std::size_t>(j)];
        db::ResultRecord r;
        r.sweep_id = sweep_id;
        r.variant_id = ids.variants[static_cast<std::size_t>(i)];
        r.problem_id = p.id;
        const int failure_pick = (i * 31 + j * 17 + s) % 23;
        if (spec.with_failures && failure_pick == 3) {
          r.outcome = db::Outcome::Incorrect;
          r.message = "rel_rms 0.2 above the gate";
          r.max_rel_rms = 0.2;
        } else if (spec.with_failures && failure_pick == 7) {
          r.outcome = db::Outcome::Crashed;
          r.message = "worker exited with signal 11";
        } else if (spec.with_failures && failure_pick == 11) {
          r.outcome = db::Outcome::Unsupported;
          r.message = "cp_segment_chunks needs total_tokens >= segment length";
        }
        std::vector<double> samples;
        std::vector<db::PmSample> timeline;
        if (r.outcome == db::Outcome::Passed) {
          const double p50 = synthetic_latency_ms(i, p, s);
          for (int k = 0; k < spec.samples; ++k)
            samples.push_back(p50 * (0.97 + 0.06 * unit_noise(std::uint64_t(i) * 131 + j * 17 + k)));
          r.max_rel_rms = 1e-3 * (1 + unit_noise(std::uint64_t(i + j)));
          r.latency_p20_ms = p50 * 0.985;
          r.latency_p50_ms = p50;
          r.latency_p80_ms = p50 * 1.015;
          r.sample_count = spec.samples;
          r.rel_spread = 0.03;
          r.clock_mhz = 1980;
          const gdn::KernelConfig c = test_config(i);
          r.metrics.sm_busy_pct = 40 + 50 * unit_noise(std::uint64_t(i) * 3 + j);
          r.metrics.tensor_pipe_pct = c.family == gdn::Family::Fused ? 20 + 40 * unit_noise(i * 5 + j) : 5.0;
          r.metrics.achieved_occupancy_pct = 10 + 30 * unit_noise(std::uint64_t(i) * 11 + j);
          r.metrics.issue_active_pct = 30 + 40 * unit_noise(std::uint64_t(i) * 13 + j);
          r.metrics.dram_pct = 20 + 60 * unit_noise(std::uint64_t(i) * 17 + j);
          if (i % 9 == 4) {  // some results without metrics, as when CUPTI was busy
            r.metrics = {};
            r.metrics.unavailable_reason = "CUPTI profiler in use by another process";
          }
          r.registers = 128 + 8 * (i % 10);
          r.shared_bytes = 65536 * c.stages;
          r.local_bytes = (i % 10 == 9) ? 64 : 0;
          if (spec.with_pm_timeline && i < 3 && j == 0) {
            for (int t = 0; t < 40; ++t) {
              db::PmSample pm;
              pm.idx = t;
              pm.t_ns = std::int64_t{t} * 2000;
              pm.sm_busy_pct = 60 + 30 * std::sin(t * 0.3);
              pm.tensor_pipe_pct = 35 + 20 * std::sin(t * 0.3 + 1);
              pm.dram_pct = 50 + 25 * std::cos(t * 0.2);
              timeline.push_back(pm);
            }
          }
        }
        writer.insert_result(r, samples, timeline);
        ++ids.results;
      }
    }
    const bool last = s + 1 == spec.sweeps;
    if (spec.finish_sweeps || !last) writer.set_sweep_status(sweep_id, db::SweepStatus::Finished);
  }
  return ids;
}

void make_foreign_sqlite(const std::string& path) {
  std::filesystem::remove(path);
  sqlite3* handle = nullptr;
  if (sqlite3_open(path.c_str(), &handle) != SQLITE_OK)
    throw std::runtime_error("cannot create " + path);
  char* error = nullptr;
  const int rc = sqlite3_exec(
      handle, "CREATE TABLE recipes(id INTEGER PRIMARY KEY, name TEXT); "
              "INSERT INTO recipes(name) VALUES ('bread');",
      nullptr, nullptr, &error);
  sqlite3_free(error);
  sqlite3_close(handle);
  if (rc != SQLITE_OK) throw std::runtime_error("cannot fill " + path);
}

void make_corrupt_file(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  // The SQLite magic followed by garbage: opens as SQLite, fails on the first read.
  out << "SQLite format 3";
  out.put('\0');
  for (int i = 0; i < 4096; ++i) out.put(static_cast<char>((i * 37 + 11) & 0xff));
}

}  // namespace gdn::gui::testing
