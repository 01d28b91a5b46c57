// The measurement protocol: how one configuration is timed. It is stored with every result
// (docs/design.md), so two latencies are only compared when their protocols match.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gdn::profiler {

// Where the per-sample latency comes from.
enum class TimingSource {
  // CUPTI CONCURRENT_KERNEL activity records: GPU start/end of every kernel of the call.
  // Immune to launch overhead; the default. Falls back to GraphReplay when CUPTI is missing.
  CuptiActivity,
  // CUDA events around graph (or direct) launches of the call. Adds a few microseconds of
  // event overhead per sample, so short kernels read long (docs/benchmarking.md: 6.0 us vs 1.3 us).
  GraphReplay,
};

struct Protocol {
  int warmup_calls = 10;             // untimed calls before the first sample (clocks, caches, JIT)
  int min_samples = 20;              // the stop rule never stops before this many samples ...
  int max_samples = 500;             // ... and always stops at this many
  double target_rel_spread = 0.005;  // stop once (p80 - p20) / p50 <= this (0.5 %)
  double time_cap_ms = 3000.0;       // wall-clock cap of the sampling loop (stops after >= 1 sample)
  bool defeat_l2 = true;             // memset a scratch buffer >= L2 before every sample
  std::size_t l2_flush_bytes = 0;    // 0: automatic (2 x the device's L2); else must be >= L2 size
  bool use_graphs = true;            // capture the call once into a CUDA graph and replay it
  TimingSource source = TimingSource::CuptiActivity;
  int graph_replays_per_sample = 1;  // GraphReplay only: calls between the two events of a sample

  bool operator==(const Protocol&) const = default;

  // Cheap protocol for the first rounds of successive halving; precise one for survivors.
  static Protocol quick();
  static Protocol precise();
};

// Throws std::invalid_argument naming the field, what was expected and what was given.
void validate(const Protocol& p);
// Device-dependent rule: an explicit flush size must cover the whole L2 (l2_bytes of the device).
void validate_for_device(const Protocol& p, std::size_t l2_bytes);
// Bytes the flush buffer will have on a device with that L2 (resolves l2_flush_bytes == 0).
std::size_t resolved_flush_bytes(const Protocol& p, std::size_t l2_bytes);

std::string_view to_string(TimingSource s);
// "cupti" | "graph"; throws std::invalid_argument listing the accepted names.
TimingSource parse_timing_source(std::string_view text);

// Canonical one-line JSON object with every field (stable key order): the DB's protocol column.
std::string to_json(const Protocol& p);
// Inverse of to_json (accepts any key order, rejects unknown keys and bad values with a
// message naming the key). Missing keys keep their default values.
Protocol protocol_from_json(std::string_view json);

}  // namespace gdn::profiler
