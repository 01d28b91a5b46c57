// Space resolution (see space.hpp).
#include "gdn/tuner/space.hpp"

#include <fstream>
#include <set>
#include <stdexcept>

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
    e.record = {0, gdn::config_name(c), gdn::Pass::Forward, c};
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

std::vector<SpaceEntry> resolve_space(const std::string& space, const std::string& filter) {
  if (space == "default") {
    std::vector<SpaceEntry> all;
    for (const auto* v : gdn::registry()) all.push_back({record_of(*v), true, ""});
    return filtered(std::move(all), space, filter);
  }
  if (space == "all") return filtered(full_space(), space, filter);
  const auto known = full_space();
  std::vector<SpaceEntry> listed;
  std::set<std::string> seen;
  for (const auto& [name, line] : read_space_file(space)) {
    const SpaceEntry* hit = nullptr;
    for (const auto& e : known)
      if (e.record.name == name) hit = &e;
    if (!hit)
      throw std::invalid_argument("--space: " + space + ":" + std::to_string(line) + ": '" + name +
                                  "' is not a variant name of this build's config space (see gdnlab space)");
    if (seen.insert(name).second) listed.push_back(*hit);
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

std::vector<SpaceListing> list_space() {
  std::vector<SpaceListing> out;
  std::set<std::string> seen;
  for (const auto& c : gdn::full_config_space()) {
    SpaceListing l;
    l.name = gdn::config_name(c);
    l.pass = "fwd";
    const auto check = gdn::check_config(c);
    l.valid = check.ok;
    l.reason = check.reason;
    if (const auto* v = gdn::find_variant(l.name)) {
      l.compiled = true;
      l.description = v->describe();
    }
    if (seen.insert(l.name).second) out.push_back(std::move(l));
  }
  for (const auto* v : gdn::registry()) {
    if (!seen.insert(v->name()).second) continue;
    const auto check = gdn::check_config(v->config());
    out.push_back({v->name(), v->pass() == gdn::Pass::Forward ? "fwd" : "bwd", check.ok, check.reason,
                   true, v->describe()});
  }
  return out;
}

}  // namespace gdn::tuner
