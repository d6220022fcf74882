#include "support/text_file.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::support {
namespace {

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Inflates every gzip member (a file may hold several concatenated members, as `cat a.gz b.gz`).
std::string gunzip(const std::string& bytes, const std::filesystem::path& path, int64_t max_bytes) {
  std::string out;
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK)
    throw Error(fmt::format("{}: cannot start gzip decoder", path.string()));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  char buffer[1 << 16];
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof buffer;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - zs.avail_out);
    if (static_cast<int64_t>(out.size()) > max_bytes) {
      inflateEnd(&zs);
      throw FormatError(fmt::format("{}: decompresses to more than {} bytes, the most mutwo reads",
                                    path.string(), max_bytes));
    }
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // next member
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) {  // input ran out inside a member
      rc = Z_BUF_ERROR;
      break;
    }
  }
  const std::string why = zs.msg != nullptr ? zs.msg : "truncated stream";
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    throw FormatError(fmt::format("{}: corrupt gzip data after {} decompressed bytes ({})", path.string(),
                                  out.size(), why));
  }
  return out;
}

}  // namespace

std::string read_file_bytes(const std::filesystem::path& path, std::string_view what, int64_t max_bytes) {
  const std::string label =
      what.empty() ? fmt::format("'{}'", path.string()) : fmt::format("{} '{}'", what, path.string());
  // A device never ends (/dev/zero, /dev/urandom): refused before it is opened. A pipe (a FIFO, the
  // shell's <(zcat ...)) is read in pieces up to max_bytes, since it has no size to check first.
  std::error_code status_ec;
  const std::filesystem::file_status status = std::filesystem::status(path, status_ec);
  if (!status_ec && (std::filesystem::is_character_file(status) || std::filesystem::is_block_file(status) ||
                     std::filesystem::is_socket(status))) {
    throw Error(fmt::format("cannot read {}: it is a device or socket, not a file", label));
  }
  if (!status_ec && std::filesystem::is_directory(status)) {
    throw Error(fmt::format("cannot read {}: it is a directory, not a file", label));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {} for reading: {}", label, std::strerror(errno)));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(max_bytes)) {
    throw Error(fmt::format("{} is {} bytes, more than the {} mutwo reads", label, size, max_bytes));
  }
  std::string bytes;
  char piece[1 << 16];
  while (in.read(piece, sizeof piece) || in.gcount() > 0) {
    bytes.append(piece, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(bytes.size()) > max_bytes) {
      throw Error(fmt::format("{} holds more than the {} bytes mutwo reads", label, max_bytes));
    }
  }
  if (in.bad()) throw Error(fmt::format("cannot read {}", label));
  return bytes;
}

std::string text_of_bytes(std::string bytes, const std::filesystem::path& source, int64_t max_bytes) {
  return is_gzip(bytes) ? gunzip(bytes, source, max_bytes) : bytes;
}

std::string read_text_file(const std::filesystem::path& path, std::string_view what, int64_t max_bytes) {
  return text_of_bytes(read_file_bytes(path, what, max_bytes), path, max_bytes);
}

std::filesystem::path writable_target(const std::filesystem::path& path, std::string_view what) {
  const std::string label =
      what.empty() ? fmt::format("'{}'", path.string()) : fmt::format("{} '{}'", what, path.string());
  std::error_code ec;
  std::filesystem::path target = path;
  // A link is written through (the rename would replace the link itself with a file), to its
  // target even when that does not exist yet; a chain is followed as the kernel does (40 links).
  for (int links = 0; std::filesystem::is_symlink(std::filesystem::symlink_status(target, ec)); ++links) {
    if (links == 40) throw Error(fmt::format("cannot write {}: too many levels of links", label));
    const std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec) throw Error(fmt::format("cannot write {}: cannot follow the link: {}", label, ec.message()));
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const std::filesystem::file_status status = std::filesystem::status(target, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw Error(fmt::format("cannot write {}: {} is a {}, not a regular file", label, target.string(),
                            std::filesystem::is_directory(status) ? "directory" : "device, pipe or socket"));
  }
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, ec)) {
    throw Error(fmt::format("cannot write {}: no directory '{}'", label, dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw Error(
        fmt::format("cannot write {}: directory '{}': {}", label, dir.string(), std::strerror(errno)));
  }
  return target;
}

void check_output_paths(const FlagPaths& outputs, std::string_view context, const FlagPaths& inputs) {
  std::vector<std::pair<std::string_view, std::filesystem::path>> seen;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    const std::filesystem::path target =
        std::filesystem::absolute(writable_target(path, flag)).lexically_normal();
    for (const auto& [in_flag, in_path] : inputs) {
      std::error_code ec;
      if (!in_path.empty() && std::filesystem::equivalent(target, in_path, ec) && !ec) {
        throw Error(
            fmt::format("{}{} '{}' is the {} file read ('{}'): writing it would replace an input; give "
                        "the output its own file",
                        context, flag, path, in_flag, in_path));
      }
    }
    for (const auto& [other_flag, other] : seen) {
      if (other == target) {
        throw Error(fmt::format("{}{} and {} are the same file '{}': give each its own", context, other_flag,
                                flag, path));
      }
    }
    seen.emplace_back(flag, target);
  }
}

void write_file_atomic(const std::filesystem::path& requested, std::string_view text, std::string_view what) {
  const std::filesystem::path path = writable_target(requested, what);
  const std::string label = what.empty() ? fmt::format("'{}'", requested.string())
                                         : fmt::format("{} '{}'", what, requested.string());
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  // Same directory as the target, so the rename is atomic on one file system; the pid keeps two
  // processes writing the same file (shards of a sweep) off each other's temporary file.
  const std::filesystem::path tmp = dir / fmt::format(".{}.tmp-{}", path.filename().string(), ::getpid());
  auto fail = [&](const std::string& reason) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error(fmt::format("cannot write {}: {}", label, reason));
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) fail("write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail(ec.message());
}

std::vector<std::pair<int, std::string_view>> numbered_lines(std::string_view text) {
  std::vector<std::pair<int, std::string_view>> out;
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    if (!(end == text.size() && line.empty())) out.emplace_back(number, line);
    start = end + 1;
  }
  return out;
}

}  // namespace mutwo::support
