// The coordinator <-> worker pipe protocol: one message per line,
//   <verb> TAB key=value TAB key=value ... LF
// Values are escaped (backslash, tab, newline, carriage return) so any string survives; lists
// of numbers are comma-separated with 17 significant digits (doubles round-trip exactly).
// Line-based text keeps the protocol debuggable by hand: `gdnlab worker` can be driven from
// a terminal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gdn::tuner::wire {

struct Message {
  std::string verb;
  std::vector<std::pair<std::string, std::string>> fields;

  Message& set(std::string key, std::string value);
  Message& set(std::string key, double value);
  Message& set(std::string key, long long value);
  Message& set(std::string key, const std::vector<double>& values);

  const std::string* find(std::string_view key) const;
  // Throws std::runtime_error naming the key when it is missing or malformed.
  const std::string& str(std::string_view key) const;
  double num(std::string_view key) const;
  long long integer(std::string_view key) const;
  std::vector<double> nums(std::string_view key) const;
  std::vector<long long> integers(std::string_view key) const;
  std::optional<double> opt_num(std::string_view key) const;  // absent or "" -> nullopt
};

// One line, without the trailing LF.
std::string encode(const Message& m);
// Throws std::runtime_error on a malformed line (bad escape, field without '=').
Message decode(std::string_view line);

std::string format_double(double v);
double parse_double(std::string_view s, std::string_view what);
long long parse_integer(std::string_view s, std::string_view what);

}  // namespace gdn::tuner::wire
