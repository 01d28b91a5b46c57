// Protocol <-> one flat JSON object, through nlohmann/json. Only a flat object of string,
// number and boolean values is accepted; a duplicate key is refused (the parser alone would
// keep the last one silently).
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "gdn/profiler/protocol.hpp"
#include "gdn/text/json.hpp"

namespace gdn::profiler {
namespace {

using text::Json;

[[noreturn]] void bad_value(const std::string& key, std::string_view expected, const Json& got) {
  throw std::invalid_argument("protocol JSON: key '" + key + "': expected " + std::string(expected) +
                              ", got " + text::dump_json(got, -1));
}

long long read_integer(const std::string& key, const Json& v, long long lo, long long hi) {
  if (!v.is_number_integer()) bad_value(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
  // Unsigned values above the signed range read as out of range, not wrapped.
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    bad_value(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
  const long long out = v.get<long long>();
  if (out < lo || out > hi)
    bad_value(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", v);
  return out;
}

double read_number(const std::string& key, const Json& v) {
  if (!v.is_number()) bad_value(key, "a finite number", v);
  return v.get<double>();  // JSON has no NaN or infinity: a parsed number is finite
}

bool read_bool(const std::string& key, const Json& v) {
  if (!v.is_boolean()) bad_value(key, "true or false", v);
  return v.get<bool>();
}

}  // namespace

std::string to_json(const Protocol& p) {
  const Json j = {{"warmup_calls", p.warmup_calls},
                  {"min_samples", p.min_samples},
                  {"max_samples", p.max_samples},
                  {"target_rel_spread", p.target_rel_spread},
                  {"time_cap_ms", p.time_cap_ms},
                  {"defeat_l2", p.defeat_l2},
                  {"l2_flush_bytes", p.l2_flush_bytes},
                  {"use_graphs", p.use_graphs},
                  {"source", to_string(p.source)},
                  {"graph_replays_per_sample", p.graph_replays_per_sample}};
  return text::dump_json(j, -1);
}

Protocol protocol_from_json(std::string_view json) {
  constexpr long long int_max = std::numeric_limits<int>::max();
  std::set<std::string> seen;
  std::string duplicate;
  const Json::parser_callback_t note_keys = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  Json j;
  try {
    j = Json::parse(json.begin(), json.end(), note_keys);
  } catch (const Json::parse_error& e) {
    throw std::invalid_argument(std::string("protocol JSON: not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) throw std::invalid_argument("protocol JSON: expected an object {...}, got " + text::dump_json(j, -1));
  if (!duplicate.empty()) throw std::invalid_argument("protocol JSON: duplicate key '" + duplicate + "'");
  Protocol p;
  const std::map<std::string, std::function<void(const std::string&, const Json&)>> setters = {
      {"warmup_calls", [&](auto& k, auto& v) { p.warmup_calls = static_cast<int>(read_integer(k, v, 0, int_max)); }},
      {"min_samples", [&](auto& k, auto& v) { p.min_samples = static_cast<int>(read_integer(k, v, 0, int_max)); }},
      {"max_samples", [&](auto& k, auto& v) { p.max_samples = static_cast<int>(read_integer(k, v, 0, int_max)); }},
      {"target_rel_spread", [&](auto& k, auto& v) { p.target_rel_spread = read_number(k, v); }},
      {"time_cap_ms", [&](auto& k, auto& v) { p.time_cap_ms = read_number(k, v); }},
      {"defeat_l2", [&](auto& k, auto& v) { p.defeat_l2 = read_bool(k, v); }},
      {"l2_flush_bytes", [&](auto& k, auto& v) {
         p.l2_flush_bytes = static_cast<std::size_t>(read_integer(k, v, 0, std::numeric_limits<long long>::max()));
       }},
      {"use_graphs", [&](auto& k, auto& v) { p.use_graphs = read_bool(k, v); }},
      {"source", [&](auto& k, auto& v) {
         if (!v.is_string()) bad_value(k, "'cupti' or 'graph'", v);
         p.source = parse_timing_source(v.template get<std::string>());
       }},
      {"graph_replays_per_sample", [&](auto& k, auto& v) {
         p.graph_replays_per_sample = static_cast<int>(read_integer(k, v, 0, int_max));
       }},
  };
  for (const auto& [key, value] : j.items()) {
    auto it = setters.find(key);
    if (it == setters.end()) throw std::invalid_argument("protocol JSON: unknown key '" + key + "'");
    it->second(key, value);
  }
  validate(p);
  return p;
}

}  // namespace gdn::profiler
