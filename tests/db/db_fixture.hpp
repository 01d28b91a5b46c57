// Builds results databases programmatically for the db tests: a scratch directory per test,
// typed records with sensible defaults, and one-line result inserts.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/writer.hpp"

namespace gdn::db::test {

// A fresh directory under the system temp dir, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("gdn_db_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
             (info ? info->name() : "x"));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::filesystem::path path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline DeviceRecord h200(const std::string& driver = "580.65.06") {
  DeviceRecord d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-0000-test";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_clock_mhz = 1980;
  d.mem_clock_mhz = 3201;
  d.memory_bytes = 150'000'000'000;
  d.l2_bytes = 52'428'800;
  d.driver_version = driver;
  d.cuda_version = "13.0";
  return d;
}

inline BuildRecord build(const std::string& sha = "abc1234") {
  return BuildRecord{0, sha, "-O3 -arch=sm_90a", "default", ""};
}

inline VariantRecord fused_variant(const std::string& name, int block_v, int stages,
                                   gdn::Pass pass = gdn::Pass::Forward) {
  VariantRecord v;
  v.name = name;
  v.pass = pass;
  v.config.pass = pass;
  v.config.family = gdn::Family::Fused;
  v.config.block_v = block_v;
  v.config.stages = stages;
  v.config.roles = gdn::WarpRoles::ProducerConsumer;
  return v;
}

// A chunked backward candidate: the fused family with these roles, V-block and CP segments.
inline VariantRecord backward_variant(const std::string& name, gdn::WarpRoles roles, int block_v, int cp) {
  VariantRecord v = fused_variant(name, block_v, 2, gdn::Pass::Backward);
  v.config.roles = roles;
  v.config.cp_segment_chunks = cp;
  return v;
}

// A packed problem of num_seqs sequences; seqlens text lists them equal-length but the
// longest one is max_seqlen (enough for bucketing tests).
inline ProblemRecord problem(int row, int h_qk, int h_v, std::int64_t num_seqs,
                             std::int64_t total_tokens, std::int64_t max_seqlen,
                             const std::string& dtype = "bf16") {
  ProblemRecord p;
  p.shape_set_name = "test";
  p.shape_set_hash = "hash-test";
  p.row_index = row;
  p.h_qk = h_qk;
  p.h_v = h_v;
  p.k = 128;
  p.v = 128;
  p.dtype = dtype;
  p.batch = 1;
  p.num_seqs = num_seqs;
  p.total_tokens = total_tokens;
  p.max_seqlen = max_seqlen;
  p.seqlens = std::to_string(max_seqlen) + "x" + std::to_string(num_seqs) + "/" +
              std::to_string(total_tokens);
  return p;
}

inline SweepRecord sweep_of(std::int64_t device_id, std::int64_t build_id) {
  SweepRecord s;
  s.device_id = device_id;
  s.build_id = build_id;
  s.space = "default";
  s.shapes = "test";
  s.strategy = "exhaustive";
  s.metrics_level = "basic";
  s.protocol = ProtocolRecord{10, 20, 200, 0.02, 2000.0, 256 << 20, true};
  s.args = "gdnlab sweep --shapes test";
  return s;
}

// A Passed result with a symmetric noise band: p20 = p50 * (1 - noise/2), p80 = p50 * (1 + noise/2).
inline ResultRecord passed(std::int64_t sweep, std::int64_t variant, std::int64_t problem,
                           double p50, double noise = 0.02) {
  ResultRecord r;
  r.sweep_id = sweep;
  r.variant_id = variant;
  r.problem_id = problem;
  r.outcome = Outcome::Passed;
  r.max_rel_rms = 1e-3;
  r.errors_json = R"({"o": {"rel_rms": 0.001}})";
  r.latency_p20_ms = p50 * (1 - noise / 2);
  r.latency_p50_ms = p50;
  r.latency_p80_ms = p50 * (1 + noise / 2);
  r.sample_count = 3;
  r.rel_spread = noise;
  r.clock_mhz = 1980;
  r.metrics.sm_busy_pct = 80;
  r.metrics.tensor_pipe_pct = 40;
  r.registers = 168;
  r.shared_bytes = 200000;
  r.local_bytes = 0;
  return r;
}

inline ResultRecord failed(std::int64_t sweep, std::int64_t variant, std::int64_t problem,
                           Outcome outcome, const std::string& message) {
  ResultRecord r;
  r.sweep_id = sweep;
  r.variant_id = variant;
  r.problem_id = problem;
  r.outcome = outcome;
  r.message = message;
  r.metrics.unavailable_reason = "not profiled: " + message;
  return r;
}

inline InsertedResult insert(ResultsWriter& w, const ResultRecord& r) {
  const double p50 = r.latency_p50_ms.value_or(0);
  const std::vector<double> samples =
      r.latency_p50_ms ? std::vector<double>{*r.latency_p20_ms, p50, *r.latency_p80_ms}
                       : std::vector<double>{};
  return w.insert_result(r, samples);
}

}  // namespace gdn::db::test
