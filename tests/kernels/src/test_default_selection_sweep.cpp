// The default rule replayed over real measurements:
// - the forward: the committed H200 anchor sweep of every column-warp variant on the 171
//   forward anchor rows (bench/results/h200_2026-11-30_anchors_sweep.sqlite, read-only; build
//   c2bd693, the prepare kernel beside the loop where its rule says so, on SMs of its own when
//   exclusive), each variant with the resources the H200 build had (two 64-column CTAs or one
//   128-column CTA per SM). The rule was fitted to an earlier sweep (2.2 % geometric-mean gap,
//   worst row 1.23x there) and its CP step refitted to this one when the exclusive overlap
//   came (1.7 %, worst 1.26x: 4096 + 28672 tokens at 16/16 heads; the rule before it scored
//   4.7 %, worst 1.74x, here);
// - the backward's fused kernel: its H100 sweep of the six segment lengths on the 32 backward
//   anchor rows (bench/results/h100_2026-12-08_fused_backward_load_groups/rows32_head.sqlite,
//   build 2a4bfa4; one CTA of 512 threads per SM), to which step 3'' was fitted (1.9 %, worst
//   1.18x: 32k tokens in 8 sequences at 8/16 heads).
// Per row the rule picks among those variants and its measured p50 is compared with the
// fastest variant's. The bars keep a little slack: a change to the rule that loses speed on
// real data fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include "default_selection.hpp"
#include "gdn/variant_config.hpp"
#include "gdn/db/database.hpp"
#include "gdn/db/model.hpp"
#include "gdn/testing/fake_variant.hpp"

#if !defined(GDN_ANCHOR_SWEEP_DB) || !defined(GDN_FUSED_BWD_SWEEP_DB)
#error "GDN_ANCHOR_SWEEP_DB, GDN_FUSED_BWD_SWEEP_DB: the sweep databases the rule was fitted to"
#endif

namespace {

struct Measured {
  gdn::db::ProblemRecord problem;
  std::map<std::string, double> p50_ms;  // variant name -> p50 of its Passed result
};

std::map<std::int64_t, Measured> load_sweep(const char* path) {
  gdn::db::OpenOptions options;
  options.read_only = true;
  const gdn::db::Database db = gdn::db::Database::open(path, options);
  gdn::db::ResultQuery query;
  query.sweep_id = 1;
  std::map<std::int64_t, Measured> rows;
  for (const gdn::db::ResultRow& r : gdn::db::query_results(db, query)) {
    if (r.result.outcome != gdn::db::Outcome::Passed || !r.result.latency_p50_ms) continue;
    Measured& m = rows[r.problem.id];
    m.problem = r.problem;
    m.p50_ms[r.variant.name] = *r.result.latency_p50_ms;
  }
  return rows;
}

std::vector<gdn::KernelConfig> column_warp_configs() {
  std::vector<gdn::KernelConfig> configs;
  for (int block_v : {64, 128})
    for (int cp : {0, 4, 8, 16, 32, 64, 128, 256}) {
      gdn::KernelConfig c;
      c.family = gdn::Family::Fused;
      c.block_v = block_v;
      c.stages = 2;
      c.roles = gdn::WarpRoles::ColumnWarps;
      c.cp_segment_chunks = cp;
      configs.push_back(c);
    }
  return configs;
}

// Fake variants of these configs, each with `resources(config)` as its resources.
class Pool {
 public:
  template <class Resources>
  Pool(gdn::Pass pass, const std::vector<gdn::KernelConfig>& configs, Resources resources) {
    for (gdn::KernelConfig c : configs) {
      c.pass = pass;
      owned_.push_back(std::make_unique<gdn::testing::FakeVariant>(pass, c, gdn::config_name(c)));
      owned_.back()->set_resources(resources(c));
      variants_.push_back(owned_.back().get());
    }
  }
  std::span<const gdn::Variant* const> variants() const { return variants_; }

 private:
  std::vector<std::unique_ptr<gdn::testing::FakeVariant>> owned_;
  std::vector<const gdn::Variant*> variants_;
};

// The rule's pick on every row against the row's fastest variant: the geometric-mean gap and
// the worst ratio, printed with the worst row; every pick must have a Passed result.
void expect_close_to_fastest(const std::map<std::int64_t, Measured>& rows, const Pool& pool,
                             double max_gap, double max_worst) {
  double log_sum = 0, worst = 0;
  std::string worst_row;
  for (const auto& [id, m] : rows) {
    gdn::detail::SelectionInput in;
    in.num_seqs = m.problem.num_seqs;
    in.longest = m.problem.max_seqlen;
    in.tokens = m.problem.total_tokens;
    in.Hv = m.problem.h_v;
    in.V = m.problem.v;
    in.sm_count = 132;
    const gdn::Variant* pick = gdn::detail::select_default_variant(in, pool.variants());
    ASSERT_NE(pick, nullptr);
    const auto picked = m.p50_ms.find(pick->name());
    ASSERT_NE(picked, m.p50_ms.end()) << pick->name() << " has no Passed result on row "
                                      << m.problem.row_index;
    double fastest = picked->second;
    for (const auto& [name, ms] : m.p50_ms) fastest = std::min(fastest, ms);
    const double ratio = picked->second / fastest;
    log_sum += std::log(ratio);
    if (ratio > worst) {
      worst = ratio;
      worst_row = "row " + std::to_string(m.problem.row_index) + " (" + m.problem.seqlens +
                  " at " + std::to_string(m.problem.h_qk) + "/" + std::to_string(m.problem.h_v) +
                  " heads): " + pick->name();
    }
  }
  const double gap = std::exp(log_sum / static_cast<double>(rows.size())) - 1;
  std::printf("default rule vs fastest over %zu rows: gap %.2f %%, worst %.3fx at %s\n",
              rows.size(), 100 * gap, worst, worst_row.c_str());
  EXPECT_LT(gap, max_gap);
  EXPECT_LT(worst, max_worst) << worst_row;
}

TEST(DefaultSelectionSweep, ColumnWarpPicksStayCloseToTheFastestOnTheH200AnchorRows) {
  const std::map<std::int64_t, Measured> rows = load_sweep(GDN_ANCHOR_SWEEP_DB);
  ASSERT_EQ(rows.size(), 171u) << "every forward anchor row has Passed results";
  const Pool pool(gdn::Pass::Forward, column_warp_configs(), [](const gdn::KernelConfig& c) {
    gdn::Variant::Resources r;
    r.ctas_per_sm = c.block_v == 64 ? 2 : 1;
    r.threads = 128 + c.block_v / 16 * 32;
    return r;
  });
  expect_close_to_fastest(rows, pool, 0.03, 1.3);
}

TEST(DefaultSelectionSweep, FusedBackwardSegmentsStayCloseToTheFastestOnTheH100BackwardRows) {
  const std::map<std::int64_t, Measured> rows = load_sweep(GDN_FUSED_BWD_SWEEP_DB);
  ASSERT_EQ(rows.size(), 32u) << "every backward anchor row has Passed results";
  std::vector<gdn::KernelConfig> configs;
  for (int cp : {0, 8, 16, 32, 64, 128}) {
    gdn::KernelConfig c;
    c.family = gdn::Family::Fused;
    c.block_v = 128;
    c.stages = 2;
    c.roles = gdn::WarpRoles::ProducerConsumer;
    c.cp_segment_chunks = cp;
    configs.push_back(c);
  }
  const Pool pool(gdn::Pass::Backward, configs, [](const gdn::KernelConfig&) {
    gdn::Variant::Resources r;
    r.ctas_per_sm = 1;
    r.threads = 512;
    return r;
  });
  expect_close_to_fastest(rows, pool, 0.025, 1.2);
}

}  // namespace
