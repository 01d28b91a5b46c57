// gdnlab space: the variant space with validity, reasons, and what this build compiled.
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "gdn/tuner/space.hpp"

namespace gdn::cli {

void add_space(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("space", "Show the variant space: every config, whether it is valid (and why not), "
                                          "and whether this build compiled it");
  auto compiled_only = std::make_shared<bool>(false);
  sub->add_flag("--compiled", *compiled_only, "Only the variants compiled into this build");
  sub->callback([&run, compiled_only] {
    run = [compiled_only] {
      const auto rows = tuner::list_space();
      std::size_t valid = 0, compiled = 0;
      std::cout << std::left << std::setw(48) << "variant" << std::setw(5) << "pass" << std::setw(7) << "valid"
                << std::setw(10) << "compiled" << "reason / description\n";
      for (const auto& r : rows) {
        valid += r.valid;
        compiled += r.compiled;
        if (*compiled_only && !r.compiled) continue;
        std::cout << std::setw(48) << r.name << std::setw(5) << r.pass << std::setw(7) << (r.valid ? "yes" : "no")
                  << std::setw(10) << (r.compiled ? "yes" : "no") << (r.valid ? r.description : r.reason) << '\n';
      }
      std::cout << rows.size() << " configs, " << valid << " valid, " << compiled << " compiled\n";
      return 0;
    };
  });
}

}  // namespace gdn::cli
