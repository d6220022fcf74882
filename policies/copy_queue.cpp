#include "policies/copy_queue.hpp"

#include <limits>
#include <utility>

namespace mutwo::policies {
namespace {

constexpr int64_t kNoEarlierCopyNs = std::numeric_limits<int64_t>::min();
// A trial prices the lateness it adds to at most this many of the copies queued after it.
constexpr size_t kMaxCascade = 64;

}  // namespace

size_t CopyQueue::slot(int64_t ready_ns, int64_t key) const {
  const auto it = std::lower_bound(copies_.begin(), copies_.end(), std::make_pair(ready_ns, key),
                                   [](const Copy& c, const std::pair<int64_t, int64_t>& v) {
                                     return std::make_pair(c.ready_ns, c.key) < v;
                                   });
  return static_cast<size_t>(it - copies_.begin());
}

CopyQueue::Trial CopyQueue::trial(int64_t ready_ns, int64_t duration_ns, int64_t key) const {
  const size_t i = slot(ready_ns, key);
  Trial t;
  t.start_ns = std::max(ready_ns, i == 0 ? kNoEarlierCopyNs : copies_[i - 1].end_ns);
  t.end_ns = t.start_ns + duration_ns;
  // The copies behind it start later until a gap in the queue absorbs the delay (followed for a
  // bounded number of copies: a saturated queue would make every trial linear).
  int64_t end = t.end_ns;
  for (size_t j = i; j < copies_.size() && j < i + kMaxCascade; ++j) {
    const Copy& c = copies_[j];
    const int64_t start = std::max(c.ready_ns, end);
    if (start == c.start_ns) break;
    end = start + c.duration_ns;
    t.added_lateness_ns += lateness(end, c.deadline_ns) - lateness(c.end_ns, c.deadline_ns);
  }
  return t;
}

void CopyQueue::insert(int64_t ready_ns, int64_t duration_ns, int64_t key, int64_t deadline_ns) {
  const size_t i = slot(ready_ns, key);
  Copy c;
  c.ready_ns = ready_ns;
  c.key = key;
  c.duration_ns = duration_ns;
  c.deadline_ns = deadline_ns;
  c.start_ns = std::max(ready_ns, i == 0 ? kNoEarlierCopyNs : copies_[i - 1].end_ns);
  c.end_ns = c.start_ns + duration_ns;
  copies_.insert(copies_.begin() + static_cast<std::ptrdiff_t>(i), c);
  for (size_t j = i + 1; j < copies_.size(); ++j) {
    Copy& next = copies_[j];
    const int64_t start = std::max(next.ready_ns, copies_[j - 1].end_ns);
    if (start == next.start_ns) break;
    next.start_ns = start;
    next.end_ns = start + next.duration_ns;
  }
}

}  // namespace mutwo::policies
