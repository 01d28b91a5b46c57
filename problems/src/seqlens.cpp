// Parsing and formatting of the seqlens column.
#include "seqlens.hpp"

#include <charconv>

namespace gdn::problems {

namespace {
// A guard against typos such as a repeat count of 10000000000: no shape set needs more.
constexpr std::int64_t kMaxSequences = 1 << 20;
}  // namespace

bool parse_count(std::string_view text, std::int64_t* value) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

bool parse_seqlens(std::string_view text, std::vector<std::int64_t>* lengths,
                   std::string* reason) {
  lengths->clear();
  if (text.empty()) {
    *reason = "seqlens is empty; expected lengths joined by '+', e.g. 410+431 or 1024*8";
    return false;
  }
  std::int64_t total = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t plus = text.find('+', start);
    const std::string_view term =
        text.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
    const size_t star = term.find('*');
    std::int64_t length = 0, count = 1;
    const bool ok = star == std::string_view::npos
                        ? parse_count(term, &length)
                        : parse_count(term.substr(0, star), &length) &&
                              parse_count(term.substr(star + 1), &count);
    if (!ok) {
      *reason = "seqlens term '" + std::string(term) +
                "' is not a length L (integer >= 0) or L*C (C sequences of length L)";
      return false;
    }
    if (count < 1 || count > kMaxSequences ||
        static_cast<std::int64_t>(lengths->size()) + count > kMaxSequences) {
      *reason = "seqlens term '" + std::string(term) + "': the number of sequences must be 1.." +
                std::to_string(kMaxSequences);
      return false;
    }
    for (std::int64_t i = 0; i < count; ++i) {
      if (__builtin_add_overflow(total, length, &total)) {
        *reason = "seqlens: the total token count overflows int64";
        return false;
      }
      lengths->push_back(length);
    }
    if (plus == std::string_view::npos) break;
    start = plus + 1;
  }
  return true;
}

std::string format_seqlens(const std::vector<std::int64_t>& lengths) {
  std::string out;
  for (size_t i = 0; i < lengths.size();) {
    size_t j = i;
    while (j < lengths.size() && lengths[j] == lengths[i]) ++j;
    if (!out.empty()) out += '+';
    out += std::to_string(lengths[i]);
    if (j - i > 1) out += '*' + std::to_string(j - i);
    i = j;
  }
  return out;
}

}  // namespace gdn::problems
