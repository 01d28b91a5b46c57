// gdnlab merge: the shard databases of one sharded sweep into one database (the db/ merge).
#include <iostream>

#include "commands.hpp"
#include "gdn/db/merge.hpp"

namespace gdn::cli {

void print_origins(std::ostream& out, const db::Database& database, std::int64_t sweep_id) {
  const auto origins = db::shard_origins(database, sweep_id);
  if (!origins.empty()) out << "sweep " << sweep_id << " is merged from shards:\n" << db::describe_origins(origins);
}

void add_merge(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("merge", "Merge the shard databases of one sharded sweep (sweep --shard I/N) "
                                          "into one database; idempotent and atomic");
  auto options = std::make_shared<db::MergeOptions>();
  sub->add_option("--into", options->into, "The merged database (created when missing)")->required();
  sub->add_option("shards", options->sources, "Shard databases (each written by gdnlab sweep --shard I/N)")
      ->required();
  sub->callback([&run, options] {
    run = [options]() -> int {
      try {
        std::cout << db::format_merge(db::merge_shards(*options));
      } catch (const db::DbError& e) {
        // The db's messages start "merge: " for callers of the library; here the prefix says it.
        const std::string what = e.what();
        return usage_error("merge", what.rfind("merge: ", 0) == 0 ? what.substr(7) : what);
      }
      return 0;
    };
  });
}

}  // namespace gdn::cli
