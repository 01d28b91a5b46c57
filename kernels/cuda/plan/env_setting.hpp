// The parsing shared by the library's benchmarking overrides (GDN_PREPARE_OVERLAP,
// GDN_CP_FIRST_SEGMENT, GDN_PREPARE_TAIL): unset or empty selects the rule, one of a few exact
// strings selects a setting, anything else is invalid (the entry points reject it,
// validate_environment.cpp).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

namespace gdn::fused {

// `rule` for nullptr or "", the setting paired with `value` in `choices`, else nullopt.
template <class Setting>
std::optional<Setting> parse_env_setting(
    const char* value, Setting rule,
    std::initializer_list<std::pair<std::string_view, Setting>> choices) {
  if (value == nullptr || value[0] == '\0') return rule;
  for (const auto& [text, setting] : choices)
    if (text == value) return setting;
  return std::nullopt;
}

// The overrides that switch one mechanism: unset or empty: the rule; "0": never; "1": wherever
// the mechanism can run (GDN_CP_FIRST_SEGMENT, GDN_PREPARE_TAIL).
enum class OnOffSetting { Rule, Off, On };

// The setting a value names (nullptr: unset); nullopt for any other value.
inline std::optional<OnOffSetting> parse_on_off(const char* value) {
  return parse_env_setting(value, OnOffSetting::Rule,
                           {{"0", OnOffSetting::Off}, {"1", OnOffSetting::On}});
}

// The variable's setting now; an invalid value reads as the rule (the entry points reject it
// first).
inline OnOffSetting on_off_setting(const char* variable) {
  return parse_on_off(std::getenv(variable)).value_or(OnOffSetting::Rule);
}

}  // namespace gdn::fused
