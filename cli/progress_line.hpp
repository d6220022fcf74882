#pragma once
// A progress line on stderr for commands that run for minutes (`mutwo experiment`, `mutwo search`): on
// a terminal one line rewritten in place, otherwise (a batch job's log) one line per update shown.
#include <chrono>
#include <ostream>
#include <string>
#include <string_view>

namespace mutwo::cli {

// "1:05", "2:03:07": seconds, rounded, as minutes:seconds or hours:minutes:seconds.
std::string clock_text(double seconds);

class ProgressLine {
 public:
  // every_s: the least time between two lines shown (0: every update).
  ProgressLine(std::ostream& out, bool tty, double every_s);
  // Shows `text` unless a line was shown less than every_s ago (the first update is always shown).
  void update(std::string_view text);
  // On a terminal, clears a shown line so that what is printed next starts on an empty line.
  void clear();
  // On a terminal, ends a shown line with a newline so that it stays above what is printed next.
  void keep();

 private:
  std::ostream& out_;
  bool tty_;
  std::chrono::duration<double> every_;
  bool shown_ = false;  // since the last clear() or keep()
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace mutwo::cli
