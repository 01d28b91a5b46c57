// Search spaces: which candidates a sweep considers. A candidate is a variant (of either pass)
// and the launch-plan fields it pins (gdn/launch_plan.hpp); its name is the variant's followed
// by the pins' suffix (gdn_fwd_..._cp16+ov2). Named spaces: "default" (every variant compiled
// into this build; with --replay, every recorded candidate) and "all" (the full config space
// of the generator: configs that are invalid or not compiled here are kept and recorded as
// CompileRejected with the reason, once per variant). A file lists candidate names, one per
// line ('#' starts a comment). Plan spaces (--plans) multiply each runnable variant by pins:
//   rule:  none (every plan field by the default rule);
//   axes:  the rule, then each plan field that applies to the variant's config alone, at each
//          value it takes (one dimension at a time);
//   grid:  every combination of the values of the fields that apply.
// --variants filters by globs on the candidate names.
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

inline constexpr const char* kPlanSpaces = "rule, axes or grid";
bool is_plan_space(const std::string& plans);

// The pins of each candidate of `config` in plan space `plans` (the rule first).
std::vector<gdn_launch_options> plan_candidates(const gdn::KernelConfig& config,
                                                const std::string& plans);

// Throws std::invalid_argument naming --space (file:line), --plans or --variants when the
// result is empty or a listed name is unknown.
std::vector<SpaceEntry> resolve_space(const std::string& space, const std::string& filter,
                                      const std::string& plans = "rule");
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
  std::string plan_fields;  // the plan fields that apply to the config ("prepare_overlap,..."),
                            // the dimensions --plans axes|grid sweeps
};
std::vector<SpaceListing> list_space();

}  // namespace gdn::tuner
