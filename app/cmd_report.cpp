// gdnlab report: best variant per problem, margins, outcome counts, metric columns.
#include <iostream>
#include <limits>

#include "commands.hpp"
#include "option_checks.hpp"

namespace gdn::cli {

void add_report(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("report", "Report a sweep: best variant per problem, margins, outcomes, metrics");
  auto db_path = std::make_shared<std::string>();
  auto sweep = std::make_shared<std::int64_t>(0);
  auto format = std::make_shared<std::string>("table");
  sub->add_option("--db", *db_path, "Results database")->required();
  sub->add_option("--sweep", *sweep, "Sweep id (default: the newest)")->check(integer_in(1, std::numeric_limits<std::int64_t>::max()));
  sub->add_option("--format", *format, "table | csv | json")->capture_default_str();
  sub->callback([&run, db_path, sweep, format] {
    run = [db_path, sweep, format]() -> int {
      const db::ReportFormat fmt = report_format_option(*format);
      const auto database = db::Database::open(*db_path, db::kReadExisting);
      std::cout << db::render_report(database, *sweep > 0 ? std::optional<std::int64_t>(*sweep) : std::nullopt, fmt);
      return 0;
    };
  });
}

}  // namespace gdn::cli
