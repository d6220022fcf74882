#include "cli/progress_line.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace mutwo::cli {

std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

ProgressLine::ProgressLine(std::ostream& out, bool tty, double every_s)
    : out_(out), tty_(tty), every_(every_s) {}

void ProgressLine::update(std::string_view text) {
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < every_) return;
  shown_ = true;
  last_ = now;
  if (tty_) {
    out_ << "\r\033[K" << text << std::flush;  // back to the line's start, erase it
  } else {
    out_ << text << "\n" << std::flush;
  }
}

void ProgressLine::clear() {
  if (tty_ && shown_) out_ << "\r\033[K" << std::flush;
  shown_ = false;
}

void ProgressLine::keep() {
  if (tty_ && shown_) out_ << "\n" << std::flush;
  shown_ = false;
}

}  // namespace mutwo::cli
