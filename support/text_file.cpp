#include "support/text_file.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open {} for reading: {}", label, std::strerror(errno)));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<uintmax_t>(max_bytes)) {
    throw Error(fmt::format("{} is {} bytes, more than the {} mutwo reads", label, size, max_bytes));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("cannot read {}", label));
  return std::move(buffer).str();
}

std::string text_of_bytes(std::string bytes, const std::filesystem::path& source, int64_t max_bytes) {
  return is_gzip(bytes) ? gunzip(bytes, source, max_bytes) : bytes;
}

std::string read_text_file(const std::filesystem::path& path, std::string_view what, int64_t max_bytes) {
  return text_of_bytes(read_file_bytes(path, what, max_bytes), path, max_bytes);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view text, std::string_view what) {
  const std::string label =
      what.empty() ? fmt::format("'{}'", path.string()) : fmt::format("{} '{}'", what, path.string());
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
