// Measurement fidelity per strategy rung, shared by every backend (GPU and replay) so a
// replayed cheap measurement sees exactly as many samples as a live one would have taken.
#pragma once

#include "gdn/profiler/protocol.hpp"

namespace gdn::tuner {

// rung < 0 (kPreciseRung): `precise`, the sweep's precise protocol (Protocol::precise() unless
// --warmup, --min-samples, ... changed it). Rung r >= 0: Protocol::quick() with its sample
// counts doubled r times (successive halving spends more on fewer survivors). Cheap rungs do
// not follow the sweep's options: they only rank variants, and the survivors are measured
// again with `precise`.
profiler::Protocol protocol_for_rung(int rung, const profiler::Protocol& precise);

// Rungs below the precise one only time: counters are read for the final measurement only.
inline bool rung_is_precise(int rung) { return rung < 0; }

}  // namespace gdn::tuner
