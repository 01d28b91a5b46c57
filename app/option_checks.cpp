// Numeric option checks (see option_checks.hpp).
#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <string>

namespace gdn::cli {

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  const std::string expected = "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, expected](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || p != end || v < lo || v > hi)
          return expected + ", got '" + text + "'";
        return {};
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v))
          return "expected a finite number, got '" + text + "'";
        return {};
      },
      "NUMBER");
}

}  // namespace gdn::cli
