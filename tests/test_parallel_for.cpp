// The project's pool (support/parallel_for.hpp): every index once, in order on the calling thread when
// one thread is asked, and the error of the lowest index that throws whatever the threads.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/parallel_for.hpp"

using mutwo::support::parallel_for;
using mutwo::support::worker_threads;

TEST_CASE("parallel_for runs every index once, on as many threads as asked") {
  std::vector<std::atomic<int>> calls(1'000);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  parallel_for(calls.size(), 4, [&](size_t i) {
    ++calls[i];
    // Long enough that the other workers take indices before this one is done.
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    const std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  for (const std::atomic<int>& c : calls) CHECK(c.load() == 1);
  CHECK(threads.size() > 1);
  CHECK(threads.size() <= 4);
  CHECK(threads.count(std::this_thread::get_id()) == 1);  // the caller works too
}

TEST_CASE("parallel_for with one thread runs in order on the calling thread") {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> order;
  parallel_for(5, 1, [&](size_t i) {
    CHECK(std::this_thread::get_id() == caller);
    order.push_back(i);
  });
  CHECK(order == std::vector<size_t>{0, 1, 2, 3, 4});
  int runs = 0;
  parallel_for(0, 8, [&](size_t) { ++runs; });
  CHECK(runs == 0);
  CHECK(worker_threads(3) == 3);
  CHECK(worker_threads(0) >= 1);
  CHECK(worker_threads(-2) == worker_threads(0));
}

TEST_CASE("parallel_for rethrows the error of the lowest index that throws, as a run in order would") {
  for (int jobs : {1, 2, 8}) {
    CAPTURE(jobs);
    std::vector<std::atomic<int>> calls(64);
    const auto message = [&](size_t slow, size_t fast) {
      std::string what;
      try {
        parallel_for(calls.size(), jobs, [&](size_t i) {
          ++calls[i];
          // On several threads `fast` throws before `slow` in time.
          if (i == slow) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            throw std::runtime_error("index " + std::to_string(i));
          }
          if (i == fast) throw std::runtime_error("index " + std::to_string(i));
        });
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      return what;
    };
    CHECK(message(7, 40) == "index 7");
    for (size_t i = 0; i <= 7; ++i) CHECK(calls[i].load() == 1);  // every index up to the failure ran
    CHECK(message(0, 1) == "index 0");
  }
}
