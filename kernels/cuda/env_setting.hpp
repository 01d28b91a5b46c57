// The parsing shared by the library's benchmarking overrides (GDN_PREPARE_OVERLAP,
// GDN_CP_FIRST_SEGMENT): unset or empty selects the rule, one of a few exact strings selects
// a setting, anything else is invalid (the entry points reject it, validate_environment.cpp).
#pragma once

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

}  // namespace gdn::fused
