#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gdn::ref::detail {

void for_each_group(const Shape& s, const RunOptions& run,
                    const std::function<void(int64_t n, int kh)>& work) {
  if (run.threads < 0)
    throw std::invalid_argument("gdn::ref: RunOptions::threads: expected >= 0 (0 = all cores), got " +
                                std::to_string(run.threads));
  const int64_t groups = s.num_seqs() * s.Hk;
  const int64_t wanted = run.threads == 0 ? std::max(1u, std::thread::hardware_concurrency())
                                          : run.threads;
  const int64_t threads = std::min<int64_t>(wanted, groups);
  if (threads <= 1) {
    for (int64_t i = 0; i < groups; ++i) work(i / s.Hk, static_cast<int>(i % s.Hk));
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < groups;) {
      try {
        work(i / s.Hk, static_cast<int>(i % s.Hk));
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (int64_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace gdn::ref::detail
