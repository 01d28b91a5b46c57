// What the panels share: the database session, the sweep list, the two selected sweeps and the
// loaded rows of sweep A. Panels read it and request changes through it; only the frame loop
// (dashboard.cpp) talks to the database for these, outside any ImGui Begin/End scope, so a
// database error can never unwind through half-built ImGui state.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gdn/db/model.hpp"
#include "gdn/gui/dashboard.hpp"
#include "gdn/gui/model/db_session.hpp"
#include "gdn/gui/model/sweep_rows.hpp"

namespace gdn::gui {

struct DashboardState {
  explicit DashboardState(const DashboardOptions& options)
      : options(options), session(options.db_path, options.refresh_interval_s) {}

  DashboardOptions options;
  model::DbSession session;
  std::vector<db::SweepSummary> sweeps;  // newest first
  std::int64_t sweep_a = 0;              // the sweep the results, plots and selection show
  std::int64_t sweep_b = 0;              // the compare partner (0: none)
  model::SweepRows rows;                 // all results of sweep_a
  // Bumped whenever anything loaded from the database changed; panels cache against it.
  std::uint64_t data_generation = 0;

  // A result picked in the results table, shown by the plots panel (position in rows).
  std::optional<std::size_t> focused_row;
  // Set by panels; applied by the frame loop before the next frame.
  std::optional<std::int64_t> requested_sweep_a, requested_sweep_b;

  const db::SweepSummary* find_sweep(std::int64_t id) const {
    for (const auto& s : sweeps)
      if (s.sweep.id == id) return &s;
    return nullptr;
  }
};

}  // namespace gdn::gui
