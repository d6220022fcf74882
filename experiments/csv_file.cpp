#include "experiments/csv_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {
namespace {

std::string cell(const std::string& text) {
  const bool quote = text.find_first_of(",\"\n\r") != std::string::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void append_line(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += cell(cells[i]);
  }
  out += '\n';
}

}  // namespace

std::string csv_text(const CsvTable& table) {
  std::string out;
  append_line(out, table.header);
  for (const std::vector<std::string>& row : table.rows) append_line(out, row);
  return out;
}

void check_csv_destination(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error(fmt::format("cannot write '{}': it is a folder", path.string()));
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  // The nearest ancestor that exists: the folder itself, or where create_directories would start.
  fs::path existing = folder;
  while (!fs::exists(fs::symlink_status(existing, ec)) && existing.has_relative_path() &&
         existing.has_parent_path() && existing.parent_path() != existing) {
    existing = existing.parent_path();
  }
  if (!fs::exists(fs::symlink_status(existing, ec))) existing = ".";  // a relative path's start
  if (!fs::is_directory(existing, ec)) {
    throw Error(fmt::format("cannot write '{}': '{}' is {}, not a folder", path.string(), existing.string(),
                            fs::exists(existing, ec) ? "a file" : "a broken link"));
  }
  const fs::path probe = existing / fmt::format(".mutwo-probe-{}", ::getpid());
  if (existing == folder) {
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
      throw Error(fmt::format("cannot write '{}': cannot create a file in folder '{}': {}", path.string(),
                              folder.string(), std::strerror(errno)));
    }
    ::close(fd);
    ::unlink(probe.c_str());
  } else {
    if (::mkdir(probe.c_str(), 0700) != 0) {
      throw Error(fmt::format("cannot write '{}': cannot create folder '{}' in '{}': {}", path.string(),
                              folder.string(), existing.string(), std::strerror(errno)));
    }
    ::rmdir(probe.c_str());
  }
}

void write_csv(const CsvTable& table, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw Error(fmt::format("cannot create folder '{}': {}", path.parent_path().string(), ec.message()));
  support::write_file_atomic(path, csv_text(table));
}

}  // namespace mutwo::experiments
