// Line protocol encoding (see wire.hpp).
#include "gdn/tuner/wire.hpp"
#include "gdn/text/number.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gdn::tuner::wire {

namespace {

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) throw std::runtime_error("protocol: dangling backslash in '" + std::string(s) + "'");
    switch (s[i]) {
      case '\\': out += '\\'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      default: throw std::runtime_error(std::string("protocol: unknown escape \\") + s[i]);
    }
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

}  // namespace

std::string format_double(double v) { return text::shortest(v); }

double parse_double(std::string_view s, std::string_view what) {
  if (s == "nan") return std::nan("");
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw std::runtime_error("protocol: field '" + std::string(what) + "' expected a number, got '" +
                             std::string(s) + "'");
  return v;
}

long long parse_integer(std::string_view s, std::string_view what) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw std::runtime_error("protocol: field '" + std::string(what) +
                             "' expected an integer, got '" + std::string(s) + "'");
  return v;
}

Message& Message::set(std::string key, std::string value) {
  fields.emplace_back(std::move(key), std::move(value));
  return *this;
}
Message& Message::set(std::string key, double value) { return set(std::move(key), format_double(value)); }
Message& Message::set(std::string key, long long value) {
  return set(std::move(key), std::to_string(value));
}
Message& Message::set(std::string key, const std::vector<double>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) s += ',';
    s += format_double(values[i]);
  }
  return set(std::move(key), std::move(s));
}

const std::string* Message::find(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

const std::string& Message::str(std::string_view key) const {
  if (const auto* v = find(key)) return *v;
  throw std::runtime_error("protocol: message '" + verb + "' lacks field '" + std::string(key) + "'");
}

double Message::num(std::string_view key) const { return parse_double(str(key), key); }
long long Message::integer(std::string_view key) const { return parse_integer(str(key), key); }

std::optional<double> Message::opt_num(std::string_view key) const {
  const auto* v = find(key);
  if (!v || v->empty()) return std::nullopt;
  return parse_double(*v, key);
}

std::vector<double> Message::nums(std::string_view key) const {
  std::vector<double> out;
  const auto& s = str(key);
  if (s.empty()) return out;
  for (auto part : split(s, ',')) out.push_back(parse_double(part, key));
  return out;
}

std::vector<long long> Message::integers(std::string_view key) const {
  std::vector<long long> out;
  const auto& s = str(key);
  if (s.empty()) return out;
  for (auto part : split(s, ',')) out.push_back(parse_integer(part, key));
  return out;
}

std::string encode(const Message& m) {
  std::string out;
  append_escaped(out, m.verb);
  for (const auto& [k, v] : m.fields) {
    out += '\t';
    append_escaped(out, k);
    out += '=';
    append_escaped(out, v);
  }
  return out;
}

Message decode(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto parts = split(line, '\t');
  Message m;
  m.verb = unescape(parts.front());
  if (m.verb.empty()) throw std::runtime_error("protocol: empty message");
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string_view::npos)
      throw std::runtime_error("protocol: field without '=' in message '" + m.verb + "': '" +
                               std::string(parts[i]) + "'");
    m.fields.emplace_back(unescape(parts[i].substr(0, eq)), unescape(parts[i].substr(eq + 1)));
  }
  return m;
}

}  // namespace gdn::tuner::wire
