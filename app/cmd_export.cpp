// gdnlab export: dispatch.json + the generated C++ table header (the db/ export code that the
// dashboard uses too).
#include <iostream>

#include "commands.hpp"
#include "gdn/db/export.hpp"

namespace gdn::cli {

void add_export(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("export", "Export the dispatch table of a sweep: dispatch.json and a C++ header");
  auto db_path = std::make_shared<std::string>();
  auto sweep = std::make_shared<std::int64_t>(0);
  auto out = std::make_shared<std::string>();
  auto merged = std::make_shared<std::vector<std::int64_t>>();
  sub->add_option("--db", *db_path, "Results database")->required();
  sub->add_option("--merge-sweep", *merged, "Also take the buckets of this sweep (repeatable; same device), "
                                            "e.g. the backward sweep beside the forward one")
      ->check(CLI::PositiveNumber);
  sub->add_option("--sweep", *sweep, "Sweep id (default: the newest with a Passed result)")->check(CLI::PositiveNumber);
  sub->add_option("--out", *out, "Output directory (created when missing)")->required();
  sub->callback([&run, db_path, sweep, out, merged] {
    run = [db_path, sweep, out, merged]() -> int {
      db::OpenOptions oo;
      oo.create_if_missing = false;
      oo.read_only = true;
      try {
        const auto database = db::Database::open(*db_path, oo);
        db::ExportOptions eo;
        if (*sweep > 0) eo.sweep_id = *sweep;
        eo.out_dir = *out;
        eo.merged_sweeps = *merged;
        const auto r = db::export_dispatch(database, eo);
        std::cout << "wrote " << r.json_path.string() << "\nwrote " << r.header_path.string() << '\n';
        print_origins(std::cout, database, r.selection.sweep.sweep.id);
      } catch (const db::DbError& e) {
        return usage_error("export", e.what());
      }
      return 0;
    };
  });
}

}  // namespace gdn::cli
