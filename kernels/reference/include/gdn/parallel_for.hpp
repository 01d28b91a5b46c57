// A plain parallel loop over indices, shared by the reference (its (sequence, k-head) groups)
// and the tuner (its input generation). Each index runs whole on one thread, so a caller whose
// work per index is deterministic gets results independent of the thread count.
#pragma once

#include <cstdint>
#include <functional>

namespace gdn::ref {

// Calls work(i) for every i in [0, count) on min(threads, count) threads (threads 0: every
// core; 1: the calling thread only), indices handed out in increasing order from a shared
// counter. Rethrows the first exception a call threw, after every thread has finished.
void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& work);

}  // namespace gdn::ref
