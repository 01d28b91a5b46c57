// Protocol <-> one flat JSON object (the DB's protocol column). Only this flat shape is read:
// string, number and boolean values, no nesting.
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "gdn/profiler/protocol.hpp"

namespace gdn::profiler {
namespace {

// Shortest text that reads back to the same double (0.005, not 0.0050000000000000001).
std::string format_double(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::to_string(v);
}

[[noreturn]] void bad_json(const std::string& what, std::size_t pos) {
  throw std::invalid_argument("protocol JSON: " + what + " at offset " + std::to_string(pos));
}

// Flat object reader: key -> raw value text (strings unquoted, escapes not supported).
class FlatJsonReader {
 public:
  explicit FlatJsonReader(std::string_view text) : s_(text) {}

  std::map<std::string, std::string> read() {
    std::map<std::string, std::string> out;
    skip_ws();
    expect('{');
    skip_ws();
    if (peek() == '}') { ++i_; return finish(out); }
    for (;;) {
      skip_ws();
      std::string key = read_string();
      skip_ws();
      expect(':');
      skip_ws();
      std::string value = peek() == '"' ? read_string() : read_bare();
      if (!out.emplace(key, value).second) bad_json("duplicate key '" + key + "'", i_);
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      expect('}');
      return finish(out);
    }
  }

 private:
  std::map<std::string, std::string>& finish(std::map<std::string, std::string>& out) {
    skip_ws();
    if (i_ != s_.size()) bad_json("trailing characters", i_);
    return out;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() { while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_; }
  void expect(char c) {
    if (peek() != c) bad_json(std::string("expected '") + c + "'", i_);
    ++i_;
  }
  std::string read_string() {
    expect('"');
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') bad_json("escapes are not supported", i_);
      ++i_;
    }
    if (i_ >= s_.size()) bad_json("unterminated string", start);
    return std::string(s_.substr(start, i_++ - start));
  }
  std::string read_bare() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' &&
           !std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
    if (i_ == start) bad_json("expected a value", i_);
    return std::string(s_.substr(start, i_ - start));
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

[[noreturn]] void bad_value(const std::string& key, std::string_view expected, const std::string& got) {
  throw std::invalid_argument("protocol JSON: key '" + key + "': expected " + std::string(expected) +
                              ", got '" + got + "'");
}

long long parse_integer(const std::string& key, const std::string& v, long long lo, long long hi) {
  long long out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc{} || end != v.data() + v.size() || out < lo || out > hi)
    bad_value(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
  return out;
}

double parse_number(const std::string& key, const std::string& v) {
  std::size_t used = 0;
  double out = 0.0;
  try {
    out = std::stod(v, &used);
  } catch (const std::exception&) {
    bad_value(key, "a number", v);
  }
  if (used != v.size() || !std::isfinite(out)) bad_value(key, "a finite number", v);
  return out;
}

bool parse_bool(const std::string& key, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  bad_value(key, "true or false", v);
}

}  // namespace

std::string to_json(const Protocol& p) {
  std::ostringstream s;
  s << "{\"warmup_calls\":" << p.warmup_calls << ",\"min_samples\":" << p.min_samples
    << ",\"max_samples\":" << p.max_samples
    << ",\"target_rel_spread\":" << format_double(p.target_rel_spread)
    << ",\"time_cap_ms\":" << format_double(p.time_cap_ms)
    << ",\"defeat_l2\":" << (p.defeat_l2 ? "true" : "false")
    << ",\"l2_flush_bytes\":" << p.l2_flush_bytes
    << ",\"use_graphs\":" << (p.use_graphs ? "true" : "false") << ",\"source\":\""
    << to_string(p.source) << "\",\"graph_replays_per_sample\":" << p.graph_replays_per_sample
    << "}";
  return s.str();
}

Protocol protocol_from_json(std::string_view json) {
  constexpr long long int_max = std::numeric_limits<int>::max();
  Protocol p;
  const std::map<std::string, std::function<void(const std::string&, const std::string&)>> setters = {
      {"warmup_calls", [&](auto& k, auto& v) { p.warmup_calls = static_cast<int>(parse_integer(k, v, 0, int_max)); }},
      {"min_samples", [&](auto& k, auto& v) { p.min_samples = static_cast<int>(parse_integer(k, v, 0, int_max)); }},
      {"max_samples", [&](auto& k, auto& v) { p.max_samples = static_cast<int>(parse_integer(k, v, 0, int_max)); }},
      {"target_rel_spread", [&](auto& k, auto& v) { p.target_rel_spread = parse_number(k, v); }},
      {"time_cap_ms", [&](auto& k, auto& v) { p.time_cap_ms = parse_number(k, v); }},
      {"defeat_l2", [&](auto& k, auto& v) { p.defeat_l2 = parse_bool(k, v); }},
      {"l2_flush_bytes", [&](auto& k, auto& v) {
         p.l2_flush_bytes = static_cast<std::size_t>(
             parse_integer(k, v, 0, std::numeric_limits<long long>::max()));
       }},
      {"use_graphs", [&](auto& k, auto& v) { p.use_graphs = parse_bool(k, v); }},
      {"source", [&](auto&, auto& v) { p.source = parse_timing_source(v); }},
      {"graph_replays_per_sample", [&](auto& k, auto& v) {
         p.graph_replays_per_sample = static_cast<int>(parse_integer(k, v, 0, int_max));
       }},
  };
  for (const auto& [key, value] : FlatJsonReader(json).read()) {
    auto it = setters.find(key);
    if (it == setters.end()) throw std::invalid_argument("protocol JSON: unknown key '" + key + "'");
    it->second(key, value);
  }
  validate(p);
  return p;
}

}  // namespace gdn::profiler
