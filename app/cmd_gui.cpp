// gdnlab gui: the Dear ImGui dashboard over a results database (built with GDN_WITH_GUI).
#include "commands.hpp"

#if GDN_WITH_GUI
#include "gdn/gui/dashboard.hpp"
#endif

namespace gdn::cli {

#if GDN_WITH_GUI
void add_gui(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("gui", "Open the tuning dashboard over a results database");
  auto o = std::make_shared<gui::DashboardOptions>();
  auto tab = std::make_shared<std::string>("results");
  auto compare_by = std::make_shared<std::string>("problem");
  auto compare_pin = std::make_shared<std::string>();
  auto size = std::make_shared<std::string>();
  sub->add_option("--db", o->db_path, "Results database (opened read-only)")->required();
  sub->add_option("--screenshot", o->screenshot_png, "Render headless, write this PNG and exit");
  sub->add_option("--frames", o->frames, "Frames to render before exiting (0: until closed)")->check(CLI::NonNegativeNumber);
  sub->add_option("--tab", *tab, "First tab: results | plots | compare | selection")->capture_default_str();
  sub->add_option("--compare-by", *compare_by,
                  "Rows of the compare tab: problem (each sweep's fastest) | candidate (the same variant and pins "
                  "in both) | pin (each candidate with --compare-pin against the same one without it)")
      ->capture_default_str();
  sub->add_option("--compare-pin", *compare_pin,
                  "With --compare-by pin: FIELD=VALUE, a plan field by name or token (pb=1)");
  sub->add_option("--size", *size, "Window / framebuffer size WxH, e.g. 1600x1000");
  sub->add_flag("--frame-stats", o->print_frame_stats, "Print a frame-time summary at exit");
  sub->callback([&run, o, tab, compare_by, compare_pin, size] {
    run = [o, tab, compare_by, compare_pin, size]() -> int {
      try {
        o->tab = gui::parse_tab(*tab);
        o->compare_by = gui::parse_compare_by_option(*compare_by);
        if (!compare_pin->empty()) o->compare_pin = gui::parse_compare_pin_option(*compare_pin);
        gui::check_compare_options(*o);
      } catch (const std::invalid_argument& e) {
        return usage_error("gui", e.what());
      }
      if (!size->empty()) {
        int w = 0, h = 0;
        char x = 0;
        if (std::sscanf(size->c_str(), "%d%c%d", &w, &x, &h) != 3 || x != 'x' || w <= 0 || h <= 0)
          return usage_error("gui", "--size: expected WxH with positive integers (e.g. 1600x1000), got '" + *size + "'");
        o->width = w;
        o->height = h;
      }
      return gui::run_dashboard(*o);
    };
  });
}
#else
void add_gui(CLI::App& app, Action& run) {
  auto* sub = app.add_subcommand("gui", "Open the tuning dashboard (this build has none: configure with -DGDN_WITH_GUI=ON)");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] { return usage_error("gui", "this gdnlab was built without the dashboard (GDN_WITH_GUI=OFF); "
                                         "reconfigure with -DGDN_WITH_GUI=ON"); };
  });
}
#endif

}  // namespace gdn::cli
