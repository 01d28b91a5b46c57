// Protocol validation, presets and names.
#include "gdn/profiler/protocol.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gdn::profiler {
namespace {

[[noreturn]] void reject(std::string_view field, std::string_view expected, const std::string& given) {
  std::ostringstream msg;
  msg << "Protocol." << field << ": expected " << expected << ", got " << given;
  throw std::invalid_argument(msg.str());
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

Protocol Protocol::quick() {
  Protocol p;
  p.warmup_calls = 3;
  p.min_samples = 5;
  p.max_samples = 50;
  p.target_rel_spread = 0.02;
  p.time_cap_ms = 500.0;
  return p;
}

Protocol Protocol::precise() {
  Protocol p;
  p.warmup_calls = 20;
  p.min_samples = 50;
  p.max_samples = 2000;
  p.target_rel_spread = 0.003;
  p.time_cap_ms = 10000.0;
  return p;
}

void validate(const Protocol& p) {
  if (p.warmup_calls < 0) reject("warmup_calls", ">= 0", std::to_string(p.warmup_calls));
  if (p.min_samples < 1) reject("min_samples", ">= 1", std::to_string(p.min_samples));
  if (p.max_samples < p.min_samples)
    reject("max_samples", ">= min_samples (" + std::to_string(p.min_samples) + ")",
           std::to_string(p.max_samples));
  if (!std::isfinite(p.target_rel_spread) || p.target_rel_spread <= 0.0)
    reject("target_rel_spread", "a finite value > 0 (e.g. 0.005 for 0.5 %)", num(p.target_rel_spread));
  if (!std::isfinite(p.time_cap_ms) || p.time_cap_ms <= 0.0)
    reject("time_cap_ms", "a finite value > 0", num(p.time_cap_ms));
  if (p.graph_replays_per_sample < 1)
    reject("graph_replays_per_sample", ">= 1", std::to_string(p.graph_replays_per_sample));
  if (p.source != TimingSource::CuptiActivity && p.source != TimingSource::GraphReplay)
    reject("source", "cupti or graph", std::to_string(static_cast<int>(p.source)));
}

void validate_for_device(const Protocol& p, std::size_t l2_bytes) {
  validate(p);
  if (p.defeat_l2 && p.l2_flush_bytes != 0 && p.l2_flush_bytes < l2_bytes)
    reject("l2_flush_bytes",
           "0 (automatic) or >= the device's L2 size (" + std::to_string(l2_bytes) + " bytes)",
           std::to_string(p.l2_flush_bytes));
}

std::size_t resolved_flush_bytes(const Protocol& p, std::size_t l2_bytes) {
  if (!p.defeat_l2) return 0;
  // Twice the L2: a write-allocate memset of exactly L2 size can leave lines of the previous
  // sample resident under the L2's hashing; 2x evicts them all.
  return p.l2_flush_bytes != 0 ? p.l2_flush_bytes : 2 * l2_bytes;
}

std::string_view to_string(TimingSource s) {
  switch (s) {
    case TimingSource::CuptiActivity: return "cupti";
    case TimingSource::GraphReplay: return "graph";
  }
  return "unknown";
}

TimingSource parse_timing_source(std::string_view text) {
  if (text == "cupti") return TimingSource::CuptiActivity;
  if (text == "graph") return TimingSource::GraphReplay;
  throw std::invalid_argument("timing source: expected 'cupti' or 'graph', got '" +
                              std::string(text) + "'");
}

}  // namespace gdn::profiler
