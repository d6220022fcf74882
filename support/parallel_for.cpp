#include "support/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mutwo::support {

size_t worker_threads(int jobs) {
  if (jobs > 0) return static_cast<size_t>(jobs);
  return std::max(1U, std::thread::hardware_concurrency());
}

void parallel_for(size_t count, int jobs, const std::function<void(size_t)>& fn) {
  const size_t threads = std::min(worker_threads(jobs), count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<size_t> failed_index{count};  // the lowest index that has thrown so far
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto work = [&] {
    for (size_t i = next++; i < count; i = next++) {
      if (i > failed_index.load()) continue;  // a run in order would have stopped before it
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (i < failed_index.load()) {
          failed_index = i;
          failure = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t k = 1; k < threads; ++k) pool.emplace_back(work);
  work();  // the calling thread is one of the workers
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace mutwo::support
