// gdnlab export: dispatch.json + the generated C++ table header (the db/ export code that the
// dashboard uses too).
#include <iostream>
#include <limits>

#include "commands.hpp"
#include "option_checks.hpp"
#include "gdn/db/export.hpp"

namespace gdn::cli {

void add_export(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("export", "Export the dispatch table of a sweep: dispatch.json and a C++ header");
  auto db_path = std::make_shared<std::string>();
  auto sweep = std::make_shared<std::int64_t>(0);
  auto out = std::make_shared<std::string>();
  auto merged = std::make_shared<std::vector<std::int64_t>>();
  auto allow_partial = std::make_shared<bool>(false);
  auto merge_db = std::make_shared<std::string>();
  sub->add_option("--db", *db_path, "Results database")->required();
  sub->add_option("--merge-sweep", *merged, "Also take the buckets of this sweep (repeatable; same device), "
                                            "e.g. the backward sweep beside the forward one")
      ->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--merge-db", *merge_db, "Read the --merge-sweep sweeps from this database (default: --db), "
                                           "e.g. a backward sweep measured on another GPU of the same kind")
      ->check(CLI::ExistingFile);
  sub->add_option("--sweep", *sweep, "Sweep id (default: the newest finished sweep with a Passed result)")->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--out", *out, "Output directory (created when missing)")->required();
  sub->add_flag("--allow-partial", *allow_partial,
                "Accept a sweep that did not finish (interrupted or running); the table is marked partial "
                "in dispatch.json and the header");
  sub->callback([&run, db_path, sweep, out, merged, allow_partial, merge_db] {
    run = [db_path, sweep, out, merged, allow_partial, merge_db]() -> int {
      if (!merge_db->empty() && merged->empty())
        return usage_error("export", "--merge-db '" + *merge_db + "': expected with --merge-sweep, got no --merge-sweep");
      const auto database = db::Database::open(*db_path, db::kReadExisting);
      db::ExportOptions eo;
      if (*sweep > 0) eo.sweep_id = *sweep;
      eo.out_dir = *out;
      eo.merged_sweeps = *merged;
      eo.allow_partial = *allow_partial;
      eo.merge_db = *merge_db;
      const auto r = db::export_dispatch(database, eo);
      std::cout << "wrote " << r.json_path.string() << "\nwrote " << r.header_path.string() << '\n';
      print_origins(std::cout, database, r.selection.sweep.sweep.id);
      return 0;
    };
  });
}

}  // namespace gdn::cli
