// Fuzz of the database opening path: a results database (the scenario of scenario.hpp, in
// rollback mode so the file is all there is) is mutated at random - header bytes, whole pages,
// truncation - and opened read-only, then every sweep is listed, checked, queried, reported and
// exported. Each step must succeed or throw DbError with a message: never another exception, a
// crash or a hang. Seeded and bounded in time.
#include <fstream>
#include <sstream>

#include "gdn/db/export.hpp"
#include "gdn/db/integrity.hpp"
#include "gdn/db/report.hpp"
#include "gdn/testing/mutation_fuzz.hpp"
#include "scenario.hpp"

namespace gdn::db::test {
namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Everything a reader does with a database it was given.
void read_everything(const std::string& path, const std::filesystem::path& out_dir) {
  const Database db = Database::open(path, {.create_if_missing = false, .read_only = true});
  for (const SweepSummary& s : list_sweeps(db)) {
    check_sweep_results(db, s.sweep.id);
    ResultQuery q;
    q.sweep_id = s.sweep.id;
    query_results(db, q);
    render_report(db, s.sweep.id, ReportFormat::Json);
    export_dispatch(db, {.sweep_id = s.sweep.id, .out_dir = out_dir, .allow_partial = true});
  }
}

TEST(DatabaseFuzz, MutatedFilesOpenOrAreRefusedCleanly) {
  ScratchDir dir;
  const std::string original = dir.file("original.db");
  {
    Database db = Database::open(original);
    write_scenario(db);
    db.exec("PRAGMA journal_mode = DELETE");  // one file: every byte of the database is mutated
  }
  const std::string seed = file_bytes(original);
  read_everything(original, dir.path() / "out");  // the unmutated file reads in full

  gdn::testing::FuzzOptions o;
  o.seed = 20261201;
  o.budget = std::chrono::milliseconds(6000);
  o.max_bytes = seed.size() + 4096;
  o.tokens = {"SQLite format 3", std::string(4, '\xff'), std::string(4, '\0'), "Passed", "1e308"};
  const std::string path = dir.file("mutated.db");
  std::size_t opened = 0, refused = 0;
  const std::size_t tried = gdn::testing::run_mutation_fuzz({seed}, o, [&](const std::string& input, std::size_t i) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << input;
    try {
      read_everything(path, dir.path() / "out");
      ++opened;
    } catch (const DbError& e) {
      ++refused;
      EXPECT_FALSE(std::string(e.what()).empty()) << "iteration " << i;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << o.seed << " iteration " << i << ": " << typeid(e).name() << ": " << e.what();
    }
  });
  std::printf("    %zu files (seed %llu): %zu read in full, %zu refused\n", tried,
              static_cast<unsigned long long>(o.seed), opened, refused);
  EXPECT_GT(tried, 50u);
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace gdn::db::test
