// Search spaces: which variants a sweep considers. Named spaces: "default" (every variant
// compiled into this build; with --replay, every recorded variant) and "all" (the full config
// space of the generator: configs that are invalid or not compiled here are kept and recorded
// as CompileRejected with the reason, once per variant). A file lists procedural names, one per line ('#'
// starts a comment). --variants filters by globs on the names.
#pragma once

#include <string>
#include <vector>

#include "gdn/db/records.hpp"

namespace gdn::tuner {

class ReplaySource;

struct SpaceEntry {
  db::VariantRecord record;
  bool runnable = true;
  std::string reject_reason;  // when !runnable: recorded as CompileRejected
};

// Throws std::invalid_argument naming --space (file:line) or --variants when the result is
// empty or a listed name is unknown.
std::vector<SpaceEntry> resolve_space(const std::string& space, const std::string& filter);
std::vector<SpaceEntry> resolve_replay_space(const ReplaySource& source, const std::string& space,
                                             const std::string& filter);

// One row per config of gdn::full_config_space() plus compiled variants outside it:
// what `gdnlab space` prints.
struct SpaceListing {
  std::string name;
  std::string pass;
  bool valid = false;
  std::string reason;
  bool compiled = false;
  std::string description;  // Variant::describe() when compiled
};
std::vector<SpaceListing> list_space();

}  // namespace gdn::tuner
