// Space resolution (see space.hpp).
#include "gdn/tuner/space.hpp"

#include <fstream>
#include <set>
#include <stdexcept>

#include "gdn/launch_plan.hpp"
#include "gdn/tuner/replay_source.hpp"
#include "gdn/tuner/sweep_options.hpp"
#include "gdn/variant.hpp"

#ifndef GDN_VARIANT_SET
#define GDN_VARIANT_SET "unknown"
#endif

namespace gdn::tuner {

namespace {

db::VariantRecord record_of(const gdn::Variant& v) {
  return {0, v.name(), v.pass(), v.config()};
}

SpaceEntry with_pins(const SpaceEntry& base, const gdn_launch_options& pins) {
  SpaceEntry e = base;
  e.record.name += gdn::pins_suffix(pins);
  e.record.pins = pins;
  return e;
}

// Each runnable entry times its plan candidates; a rejected one stays once (its reason is the
// variant's).
std::vector<SpaceEntry> expand_plans(const std::vector<SpaceEntry>& entries, const std::string& plans) {
  std::vector<SpaceEntry> out;
  for (const SpaceEntry& e : entries) {
    if (!e.runnable || !gdn::all_rule(e.record.pins)) {
      out.push_back(e);
      continue;
    }
    for (const gdn_launch_options& pins : plan_candidates(e.record.config, plans))
      out.push_back(with_pins(e, pins));
  }
  return out;
}

struct NamedLine {
  std::string name;
  int line;
};

std::vector<NamedLine> read_space_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--space: cannot read file '" + path + "'");
  std::vector<NamedLine> names;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_last_not_of(" \t\r");
    const auto name = line.substr(b, e - b + 1);
    if (name.find_first_of(" \t") != std::string::npos)
      throw std::invalid_argument("--space: " + path + ":" + std::to_string(n) +
                                  ": expected one variant name per line, got '" + name + "'");
    names.push_back({name, n});
  }
  if (names.empty()) throw std::invalid_argument("--space: file '" + path + "' lists no variant");
  return names;
}

std::vector<SpaceEntry> filtered(std::vector<SpaceEntry> all, const std::string& space,
                                 const std::string& filter) {
  std::vector<SpaceEntry> out;
  for (auto& e : all)
    if (passes_filter(filter, e.record.name)) out.push_back(std::move(e));
  if (out.empty())
    throw std::invalid_argument(filter.empty()
                                    ? "--space: '" + space + "' holds no variant in this build"
                                    : "--variants: no variant of space '" + space + "' matches '" + filter + "'");
  return out;
}

// Every config the generator knows, compiled or not, plus compiled variants of other passes.
std::vector<SpaceEntry> full_space() {
  std::vector<SpaceEntry> out;
  std::set<std::string> seen;
  for (const auto& c : gdn::full_config_space()) {
    SpaceEntry e;
    e.record = {0, gdn::config_name(c), c.pass, c};
    if (const auto* v = gdn::find_variant(e.record.name)) {
      e.record = record_of(*v);
    } else {
      const auto check = gdn::check_config(c);
      e.runnable = false;
      e.reject_reason = check.ok ? std::string("valid, but not compiled into this build (GDN_VARIANTS=") +
                                       GDN_VARIANT_SET + "; build with GDN_VARIANTS=all)"
                                 : std::string("invalid config: ") + check.reason;
    }
    if (seen.insert(e.record.name).second) out.push_back(std::move(e));
  }
  for (const auto* v : gdn::registry())
    if (seen.insert(v->name()).second) out.push_back({record_of(*v), true, ""});
  return out;
}

}  // namespace

bool is_plan_space(const std::string& plans) {
  return plans == "rule" || plans == "axes" || plans == "grid";
}

std::vector<gdn_launch_options> plan_candidates(const gdn::KernelConfig& config,
                                                const std::string& plans) {
  if (!is_plan_space(plans))
    throw std::invalid_argument(std::string("--plans: expected ") + kPlanSpaces + ", got '" + plans + "'");
  std::vector<gdn_launch_options> out{gdn::kRulePins};
  if (plans == "rule") return out;
  for (const gdn::PlanField& f : gdn::kPlanFields) {
    if (!gdn::plan_field_applies(config, f)) continue;
    if (plans == "axes") {
      for (int value : f.values) {
        gdn_launch_options pins = gdn::kRulePins;
        pins.*f.member = value;
        out.push_back(pins);
      }
      continue;
    }
    // grid: every candidate so far, at the rule and at each value of this field.
    const std::size_t before = out.size();
    for (std::size_t i = 0; i < before; ++i)
      for (int value : f.values) {
        gdn_launch_options pins = out[i];
        pins.*f.member = value;
        out.push_back(pins);
      }
  }
  return out;
}

std::vector<SpaceEntry> resolve_space(const std::string& space, const std::string& filter,
                                      const std::string& plans) {
  if (!is_plan_space(plans))
    throw std::invalid_argument(std::string("--plans: expected ") + kPlanSpaces + ", got '" + plans + "'");
  if (space == "default") {
    std::vector<SpaceEntry> all;
    for (const auto* v : gdn::registry()) all.push_back({record_of(*v), true, ""});
    return filtered(expand_plans(all, plans), space, filter);
  }
  if (space == "all") return filtered(expand_plans(full_space(), plans), space, filter);
  // A file names candidates: a variant, optionally with a pins' suffix.
  const auto known = full_space();
  std::vector<SpaceEntry> listed;
  std::set<std::string> seen;
  for (const auto& [name, line] : read_space_file(space)) {
    const std::string where = "--space: " + space + ":" + std::to_string(line) + ": '" + name + "'";
    const std::size_t plus = name.find('+');
    const std::string base = name.substr(0, plus);
    const SpaceEntry* hit = nullptr;
    for (const auto& e : known)
      if (e.record.name == base) hit = &e;
    if (!hit)
      throw std::invalid_argument(where + " is not a variant name of this build's config space (see gdnlab space)");
    gdn_launch_options pins = gdn::kRulePins;
    std::string error;
    if (plus != std::string::npos && !gdn::parse_pins_suffix(name.substr(plus), &pins, &error))
      throw std::invalid_argument(where + ": plan pins: " + error);
    if (!seen.insert(name).second) continue;
    for (const SpaceEntry& e : expand_plans({with_pins(*hit, pins)}, plans))
      if (seen.insert(e.record.name).second || e.record.name == name) listed.push_back(e);
  }
  return filtered(std::move(listed), space, filter);
}

std::vector<SpaceEntry> resolve_replay_space(const ReplaySource& src, const std::string& space,
                                             const std::string& filter) {
  std::vector<SpaceEntry> all;
  for (const auto& v : src.variants()) all.push_back({v, true, ""});
  if (space == "default" || space == "all") return filtered(std::move(all), space, filter);
  std::vector<SpaceEntry> listed;
  std::set<std::string> seen;
  for (const auto& [name, line] : read_space_file(space)) {
    const SpaceEntry* hit = nullptr;
    for (const auto& e : all)
      if (e.record.name == name) hit = &e;
    if (!hit)
      throw std::invalid_argument("--space: " + space + ":" + std::to_string(line) + ": '" + name +
                                  "' is not recorded in the replay database '" + src.path() + "'");
    if (seen.insert(name).second) listed.push_back(*hit);
  }
  return filtered(std::move(listed), space, filter);
}

namespace {
std::string applicable_plan_fields(const gdn::KernelConfig& c) {
  std::string out;
  for (const gdn::PlanField& f : gdn::kPlanFields)
    if (gdn::plan_field_applies(c, f)) out += (out.empty() ? "" : ",") + std::string(f.name);
  return out;
}
}  // namespace

std::vector<SpaceListing> list_space() {
  std::vector<SpaceListing> out;
  std::set<std::string> seen;
  for (const auto& c : gdn::full_config_space()) {
    SpaceListing l;
    l.name = gdn::config_name(c);
    l.pass = c.pass == gdn::Pass::Forward ? "fwd" : "bwd";
    const auto check = gdn::check_config(c);
    l.valid = check.ok;
    l.reason = check.reason;
    if (const auto* v = gdn::find_variant(l.name)) {
      l.compiled = true;
      l.description = v->describe();
    }
    l.plan_fields = applicable_plan_fields(c);
    if (seen.insert(l.name).second) out.push_back(std::move(l));
  }
  for (const auto* v : gdn::registry()) {
    if (!seen.insert(v->name()).second) continue;
    const auto check = gdn::check_config(v->config());
    out.push_back({v->name(), v->pass() == gdn::Pass::Forward ? "fwd" : "bwd", check.ok, check.reason,
                   true, v->describe(), applicable_plan_fields(v->config())});
  }
  return out;
}

}  // namespace gdn::tuner
