// gdn-gui-make-test-db: writes the databases the headless render tests and the frame-time
// measurement open. --kind ok|foreign|corrupt; --results N sizes an ok database (variants x
// problems ~ N, two sweeps, so 2N results in all).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "test_db.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Generate a synthetic gdnlab results database for the dashboard tests"};
  std::string out, kind = "ok";
  int results = 72, samples = 24;
  app.add_option("--out", out, "Database file to (over)write")->required();
  app.add_option("--kind", kind, "ok | foreign | corrupt")
      ->check(CLI::IsMember({"ok", "foreign", "corrupt"}));
  app.add_option("--results", results, "Results per sweep (rounded to variants x problems)")
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--samples", samples, "Timing samples per passed result")
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    if (kind == "foreign") {
      gdn::gui::testing::make_foreign_sqlite(out);
    } else if (kind == "corrupt") {
      gdn::gui::testing::make_corrupt_file(out);
    } else {
      gdn::gui::testing::TestDbSpec spec;
      spec.problems = std::max(1, std::min(results, 12 + results / 2000));
      spec.variants = std::max(1, (results + spec.problems - 1) / spec.problems);
      spec.samples = samples;
      const auto start = std::chrono::steady_clock::now();
      const auto ids = gdn::gui::testing::make_test_db(out, spec);
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%s: %zu sweeps, %d variants x %d problems, %lld results in %.1f s\n",
                  out.c_str(), ids.sweeps.size(), spec.variants, spec.problems,
                  static_cast<long long>(ids.results), s);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdn-gui-make-test-db: %s\n", e.what());
    return 1;
  }
  return 0;
}
