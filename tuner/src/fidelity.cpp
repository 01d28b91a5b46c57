#include "gdn/tuner/fidelity.hpp"

#include <algorithm>

namespace gdn::tuner {

profiler::Protocol protocol_for_rung(int rung, const profiler::Protocol& precise) {
  if (rung < 0) return precise;
  auto p = profiler::Protocol::quick();
  const int factor = 1 << std::min(rung, 6);
  p.min_samples *= factor;
  p.max_samples = std::max(p.max_samples * factor, p.min_samples);
  return p;
}

}  // namespace gdn::tuner
