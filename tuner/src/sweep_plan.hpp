// Internal: what a sweep will run, resolved from the options before the database is opened
// (so bad arguments never touch it).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/records.hpp"
#include "gdn/problems/shape_set.hpp"
#include "gdn/tuner/replay_source.hpp"
#include "gdn/tuner/space.hpp"
#include "gdn/tuner/sweep_options.hpp"
#include "gdn/variant.hpp"

namespace gdn::tuner {

struct PlannedProblem {
  db::ProblemRecord record;
  std::optional<problems::Problem> source;  // from a shape set (GPU mode, or replay with --shapes)
  std::string label;                        // "smoke#2 tp8_heads_ragged", for messages
};

struct SweepPlan {
  std::vector<SpaceEntry> variants;
  std::vector<PlannedProblem> problems;
  db::DeviceRecord device;
  db::BuildRecord build;
  std::vector<std::string> worker_args;  // after "<exe> worker"
  std::shared_ptr<const ReplaySource> replay;
  // can_implement, answered in the coordinator (host-only) so unsupported pairs are never
  // gated or sent to a worker.
  std::function<gdn::Implementable(const SpaceEntry&, const PlannedProblem&)> implementable;
};

SweepPlan make_plan(const SweepOptions& options);

db::ProblemRecord problem_record(const problems::ShapeSet& set, std::size_t row);

}  // namespace gdn::tuner
