// rel_rms: the correctness metric of docs/spec.md section 4.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "gdn/reference.hpp"

namespace gdn::ref {

double rel_rms(const std::vector<double>& x, const std::vector<double>& ref) {
  if (x.size() != ref.size())
    throw std::invalid_argument("gdn::ref::rel_rms: x: expected " + std::to_string(ref.size()) +
                                " elements (the size of ref), got " + std::to_string(x.size()));
  // Sums of squares in long double so that neither 1e-300 nor 1e+200 entries under/overflow
  // before the ratio is taken. Any NaN propagates into the result: NaN never passes a bar.
  long double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double d = static_cast<long double>(x[i]) - ref[i];
    diff += d * d;
    norm += static_cast<long double>(ref[i]) * ref[i];
  }
  if (std::isnan(static_cast<double>(diff)) || std::isnan(static_cast<double>(norm)))
    return std::numeric_limits<double>::quiet_NaN();
  if (norm == 0) return diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(std::sqrt(diff / norm));
}

}  // namespace gdn::ref
