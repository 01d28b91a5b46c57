// gdn-backward-rounding-study: the rounding model of the CUDA chunked backward
// (gdn/reference_rounding.hpp) on the GPU test's edge-set cases, against the float64 oracle.
//   --seed S         the errors of each --case on test seed S (GDN_TEST_SEED) under each
//                    --scheme, and with --attribute the rounding points' shares: the errors
//                    with one point off, and with that point alone on
//   --draws N        failure rates over N fresh test seeds (--first-seed, +1, ...) per scheme
// A case is built exactly as Backward.EdgeSetMatchesOracle builds it (edge_cases(128, 128),
// derive_seed(seed, index), h0 and dht per shape, fp16 on every fifth case).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdn/reference_rounding.hpp"
#include "gdn/testing/random.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/testing/shapes.hpp"
#include "rounding_schemes.hpp"

namespace {

using namespace gdn;
using testing::ShapeCase;

struct EdgeCase {
  size_t index;
  ShapeCase shape;
};

EdgeCase find_case(const std::string& name) {
  const std::vector<ShapeCase> all = testing::edge_cases(128, 128);
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name) return {i, all[i]};
  std::string known;
  for (const ShapeCase& c : all) known += (known.empty() ? "" : ", ") + c.name;
  throw std::invalid_argument("--case: expected an edge-set case name (" + known + "), got '" + name + "'");
}

void print_errors(const char* label, const testing::BackwardErrors& e) {
  std::printf("  %-34s", label);
  for (size_t i = 0; i < e.rel.size(); ++i)
    std::printf(" %s %.2e%s", testing::kBackwardOutputs[i], e.rel[i], e.fails(i) ? "*" : " ");
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Rounding model of the CUDA chunked backward on the edge-set cases"};
  std::vector<std::string> case_names{"T1"};
  std::vector<std::string> schemes{"kernels"};
  uint64_t seed = 0, first_seed = 1;
  int draws = 0, threads = 1;
  bool attribute = false;
  app.add_option("--case", case_names, "edge-set case names")->expected(1, -1);
  app.add_option("--scheme", schemes, "rounding schemes: " + testing::scheme_list())->expected(1, -1);
  auto* seed_opt = app.add_option("--seed", seed, "one test seed (GDN_TEST_SEED)");
  app.add_option("--draws", draws, "failure rates over this many fresh seeds")->check(CLI::PositiveNumber);
  app.add_option("--first-seed", first_seed, "the first of the --draws seeds");
  app.add_flag("--attribute", attribute, "with --seed: each rounding point's share");
  app.add_option("--threads", threads, "reference threads (0: all cores)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!seed_opt->count() && draws == 0) throw std::invalid_argument("give --seed or --draws");
    std::vector<EdgeCase> cases;
    for (const std::string& n : case_names) cases.push_back(find_case(n));
    for (const std::string& n : schemes) (void)testing::scheme(n, testing::HalfType::BF16);
    const ref::RunOptions run{threads};
    if (seed_opt->count()) {
      for (const EdgeCase& ec : cases) {
        const testing::RandomCase c = testing::edge_case_draw(ec.shape, ec.index, seed);
        const ref::BwdOutputs oracle = ref::oracle_backward(c.shape, c.inputs, c.grads, run);
        std::printf("%s (case seed %llu, %s):\n", ec.shape.name.c_str(),
                    static_cast<unsigned long long>(c.seed),
                    c.options.dtype == testing::HalfType::BF16 ? "bf16" : "fp16");
        for (const std::string& n : schemes) {
          const ref::rounding::Model m = testing::scheme(n, c.options.dtype);
          print_errors(n.c_str(), testing::backward_errors(c, m, oracle, run));
          if (!attribute) continue;
          for (size_t b = 0; b < ref::rounding::point_names().size(); ++b) {
            const uint32_t bit = 1u << b;
            ref::rounding::Model off = m, only = m;
            off.points &= ~bit;
            only.points &= bit;
            const std::string name = ref::rounding::point_names()[b];
            print_errors(("  without " + name).c_str(), testing::backward_errors(c, off, oracle, run));
            print_errors(("  only " + name).c_str(), testing::backward_errors(c, only, oracle, run));
          }
        }
      }
    }
    if (draws > 0) {
      for (const EdgeCase& ec : cases) {
        std::map<std::string, testing::FailureTally> tally;
        for (int d = 0; d < draws; ++d) {
          const uint64_t s = first_seed + static_cast<uint64_t>(d);
          const testing::RandomCase c = testing::edge_case_draw(ec.shape, ec.index, s);
          const ref::BwdOutputs oracle = ref::oracle_backward(c.shape, c.inputs, c.grads, run);
          for (const std::string& n : schemes)
            tally[n].add(testing::backward_errors(c, testing::scheme(n, c.options.dtype), oracle, run), s);
        }
        std::printf("%s, %d draws (test seeds %llu..%llu):\n", ec.shape.name.c_str(), draws,
                    static_cast<unsigned long long>(first_seed),
                    static_cast<unsigned long long>(first_seed + draws - 1));
        for (const std::string& n : schemes) std::printf("  %-22s %s\n", n.c_str(), tally[n].describe().c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdn-backward-rounding-study: %s\n", e.what());
    return 2;
  }
  return 0;
}
