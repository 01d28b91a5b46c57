// gdn_reference_demo: runs the float64 CPU reference (token-loop oracle and chunked form) over
// a named shape set and prints, per problem, the time of each and how far they agree.
//
//   gdn_reference_demo --shapes smoke [--backward] [--seed 1] [--max-work 400000]
//
// Exit status 0 when every problem that ran agrees within --tolerance, 1 otherwise.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "anchor_inputs.hpp"
#include "gdn/problems/shape_set.hpp"
#include "gdn/reference.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string shapes = "smoke";
  std::uint64_t seed = 1;
  bool backward = false;
  std::int64_t max_work = 400000;  // tokens x value heads; the oracle costs ~4 K V flops each
  double tolerance = 1e-9;
};

gdn::ref::Shape reference_shape(const gdn::problems::Problem& p) {
  gdn::ref::Shape s;
  s.B = p.batch();
  s.T = p.tokens_per_row();
  if (p.layout == gdn::problems::Layout::Packed) s.cu_seqlens = p.cu_seqlens();
  s.Hk = p.h_qk;
  s.Hv = p.h_v;
  s.K = p.k;
  s.V = p.v;
  return s;
}

template <typename F>
double milliseconds(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Largest relative RMS difference over the pairs given.
double worst(std::initializer_list<double> diffs) { return std::max(diffs); }

struct Row {
  double oracle_ms = 0, chunked_ms = 0, diff = 0;
};

Row run_problem(const gdn::ref::Shape& shape, const Options& opt) {
  const gdn::ref::Inputs in = gdn::demo::anchor_inputs(shape, opt.seed);
  Row r;
  gdn::ref::FwdOutputs oracle, chunked;
  r.oracle_ms = milliseconds([&] { oracle = gdn::ref::oracle_forward(shape, in); });
  r.chunked_ms = milliseconds([&] { chunked = gdn::ref::chunked_forward(shape, in); });
  r.diff = worst({gdn::ref::rel_rms(chunked.o, oracle.o), gdn::ref::rel_rms(chunked.ht, oracle.ht)});
  if (!opt.backward) return r;
  gdn::ref::Grads grads;
  grads.d_o = gdn::demo::anchor_inputs(shape, opt.seed + 1).v;  // randn of o's shape
  gdn::ref::BwdOutputs ob, cb;
  r.oracle_ms += milliseconds([&] { ob = gdn::ref::oracle_backward(shape, in, grads); });
  r.chunked_ms += milliseconds([&] { cb = gdn::ref::chunked_backward(shape, in, grads); });
  r.diff = std::max(r.diff, worst({gdn::ref::rel_rms(cb.dq, ob.dq), gdn::ref::rel_rms(cb.dk, ob.dk),
                                   gdn::ref::rel_rms(cb.dv, ob.dv), gdn::ref::rel_rms(cb.dg, ob.dg),
                                   gdn::ref::rel_rms(cb.dbeta, ob.dbeta),
                                   gdn::ref::rel_rms(cb.dh0, ob.dh0)}));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"Runs the float64 CPU reference (oracle and chunked form) over a shape set"};
  app.add_option("--shapes", opt.shapes, "shape set name (scripts/shapes/<name>.csv) or path")
      ->capture_default_str();
  app.add_option("--seed", opt.seed, "seed of the inputs (docs/gdn.md section 5)")
      ->capture_default_str();
  app.add_flag("--backward", opt.backward, "also run and compare the backward pass");
  app.add_option("--max-work", opt.max_work,
                 "skip problems with more tokens x value heads than this (CPU time)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--tolerance", opt.tolerance, "largest accepted chunked-vs-oracle rel. RMS")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  gdn::problems::ShapeSet set;
  try {
    set = gdn::problems::load_shape_set(opt.shapes);
  } catch (const gdn::problems::ShapeSetError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::printf("shape set %s (%zu problems, hash %s) from %s\n", set.name.c_str(),
              set.problems.size(), set.hash_hex().c_str(), set.source.c_str());
  std::printf("%-28s %5s %8s %5s %6s %11s %11s %10s  %s\n", "problem", "B", "T", "N", "Hk/Hv",
              "oracle_ms", "chunked_ms", "rel_diff", "verdict");
  int ran = 0, skipped = 0, failed = 0;
  double worst_diff = 0;
  for (const gdn::problems::Problem& p : set.problems) {
    const std::int64_t work = p.total_tokens() * p.h_v;
    const std::string heads = std::to_string(p.h_qk) + "/" + std::to_string(p.h_v);
    if (work > opt.max_work) {
      ++skipped;
      std::printf("%-28s %5lld %8lld %5lld %6s %11s %11s %10s  skipped (%lld token-heads > "
                  "--max-work)\n", p.name.c_str(), static_cast<long long>(p.batch()),
                  static_cast<long long>(p.tokens_per_row()), static_cast<long long>(p.num_seqs()),
                  heads.c_str(), "-", "-", "-", static_cast<long long>(work));
      continue;
    }
    const Row r = run_problem(reference_shape(p), opt);
    const bool ok = r.diff <= opt.tolerance;  // NaN fails
    ++ran;
    failed += ok ? 0 : 1;
    worst_diff = std::max(worst_diff, r.diff);
    std::printf("%-28s %5lld %8lld %5lld %6s %11.2f %11.2f %10.2e  %s\n", p.name.c_str(),
                static_cast<long long>(p.batch()), static_cast<long long>(p.tokens_per_row()),
                static_cast<long long>(p.num_seqs()), heads.c_str(), r.oracle_ms, r.chunked_ms,
                r.diff, ok ? "agree" : "DISAGREE");
  }
  std::printf("summary: %d ran, %d skipped, %d disagree; worst chunked-vs-oracle rel. RMS %.2e "
              "(tolerance %.0e, %s)\n", ran, skipped, failed, worst_diff, opt.tolerance,
              opt.backward ? "forward and backward" : "forward");
  return failed == 0 ? 0 : 1;
}
