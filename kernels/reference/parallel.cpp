#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gdn/parallel_for.hpp"

namespace gdn::ref {

void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& work) {
  const int64_t wanted = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  const int64_t used = std::min<int64_t>(wanted, count);
  if (used <= 1) {
    for (int64_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < count;) {
      try {
        work(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (int64_t t = 0; t < used; ++t) pool.emplace_back(worker);
  }
  if (failure) std::rethrow_exception(failure);
}

namespace detail {

void for_each_group(const Shape& s, const RunOptions& run,
                    const std::function<void(int64_t n, int kh)>& work) {
  if (run.threads < 0)
    throw std::invalid_argument("gdn::ref: RunOptions::threads: expected >= 0 (0 = all cores), got " +
                                std::to_string(run.threads));
  parallel_for(s.num_seqs() * s.Hk, run.threads,
               [&](int64_t i) { work(i / s.Hk, static_cast<int>(i % s.Hk)); });
}

}  // namespace detail
}  // namespace gdn::ref
