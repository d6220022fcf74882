// The event core every sim/ engine runs on (sim/event_core.hpp) and the eviction pool both eviction
// runtimes keep (sim/eviction_pool.hpp): orders and picks derived by hand from their rules.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/event_core.hpp"
#include "sim/eviction_pool.hpp"
#include "support/error.hpp"

using mutwo::sim::Clock;
using mutwo::sim::EventQueue;
using mutwo::sim::EvictionPool;
using mutwo::sim::kNoEventNs;

namespace {

// Pops every event, advancing the clock, as "time:payload" in the order they came out.
std::vector<std::string> drain(EventQueue<std::string>& q) {
  std::vector<std::string> out;
  while (!q.empty()) {
    const int64_t now = q.advance();
    while (q.due()) out.push_back(std::to_string(now) + ":" + q.pop_due());
  }
  return out;
}

}  // namespace

TEST_CASE("events come out by time, then in the order they were made") {
  EventQueue<std::string> q;
  CHECK(q.next_ns() == kNoEventNs);
  q.push(30, "c");
  q.push(10, "a");
  q.push(30, "d");
  q.push(10, "b");
  CHECK(q.next_ns() == 10);
  CHECK(drain(q) == std::vector<std::string>{"10:a", "10:b", "30:c", "30:d"});
  CHECK(q.now_ns() == 30);
  CHECK(q.advance() == kNoEventNs);
}

TEST_CASE("keyed events at one time come out by key, then in the order they were made") {
  EventQueue<std::string> q;
  q.push_keyed(5, (int64_t{1} << 32) | 0, "host0");
  q.push_keyed(5, 7, "task7");
  q.push_keyed(5, 2, "task2");
  q.push_keyed(5, 2, "task2-again");
  q.push_keyed(4, 9, "task9");
  CHECK(drain(q) == std::vector<std::string>{"4:task9", "5:task2", "5:task2-again", "5:task7", "5:host0"});
}

TEST_CASE("an event pushed while draining one time joins that time after the events already there") {
  EventQueue<std::string> q;
  q.push(0, "a");
  q.push(0, "b");
  std::vector<std::string> out;
  while (!q.empty()) {
    q.advance();
    while (q.due()) {
      const std::string e = q.pop_due();
      out.push_back(e);
      if (e == "a") q.push(q.now_ns(), "a-then");  // a 0 ns follow-up
    }
  }
  CHECK(out == std::vector<std::string>{"a", "b", "a-then"});
}

TEST_CASE("the clock never goes back, and advancing never skips an event") {
  Clock clock(1);  // simrd's clock starts at 1
  clock.advance_by(4);
  CHECK(clock.now_ns() == 5);
  CHECK_THROWS_AS(clock.advance_to(4), mutwo::Error);
  EventQueue<std::string> q;
  q.push(10, "x");
  q.advance_to(7);  // work between events (a copy's bytes) may end before the next event
  CHECK(q.now_ns() == 7);
  CHECK_THROWS_WITH_AS(q.advance_to(11), "event core: advancing to 11 ns would skip the event at 10 ns",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(q.push(6, "late"), "event core: an event at 6 ns is before now (7 ns)", mutwo::Error);
}

namespace {

// choose() with fixed scores, every item eligible unless listed.
int32_t pick(const EvictionPool& pool, const std::map<int32_t, double>& score,
             std::vector<int32_t> refused = {}) {
  return pool.choose(
      [&](int32_t id) { return score.at(id); },
      [&](int32_t id) { return std::find(refused.begin(), refused.end(), id) == refused.end(); });
}

}  // namespace

TEST_CASE(
    "the pool scans in the order items became candidates; a lock leaves, the last unlock rejoins at the "
    "end") {
  EvictionPool pool(4);
  for (int32_t id : {2, 0, 3, 1}) pool.enter(id);
  // Equal scores: the last in pool order (simrd's `score <= best`).
  const std::map<int32_t, double> equal{{0, 1.0}, {1, 1.0}, {2, 1.0}, {3, 1.0}};
  CHECK(pick(pool, equal) == 1);
  pool.lock(1);
  CHECK_FALSE(pool.in_scan(1));
  CHECK(pick(pool, equal) == 3);
  pool.lock(1);
  pool.unlock(1);
  CHECK(pick(pool, equal) == 3);  // still locked once
  pool.unlock(1);
  CHECK(pick(pool, equal) == 1);  // back, at the end
  pool.lock(3);
  pool.unlock(3);  // order now 2 0 1 3
  CHECK(pick(pool, equal) == 3);
  CHECK(pool.leave(3));
  CHECK_FALSE(pool.leave(3));
  CHECK(pick(pool, equal) == 1);
  // An item locked before it becomes a candidate joins when unlocked; one that left stays out.
  pool.lock(3);
  pool.enter(3);
  CHECK_FALSE(pool.in_scan(3));
  pool.unlock(3);
  CHECK(pool.in_scan(3));
  pool.lock(0);
  pool.leave(0);
  pool.unlock(0);
  CHECK_FALSE(pool.in_scan(0));
}

TEST_CASE(
    "choose: smallest score, a 0 ends the scan, refused items are passed over, NaN only as a last resort") {
  EvictionPool pool(5);
  for (int32_t id = 0; id < 5; ++id) pool.enter(id);
  CHECK(pick(pool, {{0, 3.0}, {1, 2.0}, {2, 5.0}, {3, 2.0}, {4, 9.0}}) == 3);
  // The first 0 ends the scan: a later 0 or a later negative score is never seen.
  CHECK(pick(pool, {{0, 3.0}, {1, 0.0}, {2, -1.0}, {3, 0.0}, {4, 1.0}}) == 1);
  // A 0 ends the scan even below a negative best (simrd's LRU with never-accessed storages).
  const double minus_inf = -std::numeric_limits<double>::infinity();
  CHECK(pick(pool, {{0, minus_inf}, {1, 0.0}, {2, -2e300}, {3, 1.0}, {4, 1.0}}) == 0);
  // A refused 0 does not end the scan; the next eligible smallest wins.
  CHECK(pick(pool, {{0, 3.0}, {1, 0.0}, {2, 1.0}, {3, 1.0}, {4, 2.0}}, {1}) == 3);
  CHECK(pick(pool, {{0, 3.0}, {1, 2.0}, {2, 5.0}, {3, 2.0}, {4, 9.0}}, {0, 1, 2, 3, 4}) == -1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(pick(pool, {{0, nan}, {1, 4.0}, {2, nan}, {3, nan}, {4, nan}}) == 1);
  CHECK(pick(pool, {{0, nan}, {1, nan}, {2, nan}, {3, nan}, {4, nan}}) == 4);
  CHECK(pick(pool, {{0, nan}, {1, nan}, {2, nan}, {3, nan}, {4, nan}}, {4}) == 3);
  EvictionPool none(2);
  CHECK(none.empty());
  CHECK(pick(none, {}) == -1);
}
