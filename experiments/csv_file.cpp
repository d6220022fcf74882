#include "experiments/csv_file.hpp"

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

void write_csv(const CsvTable& table, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw Error(fmt::format("cannot create folder '{}': {}", path.parent_path().string(), ec.message()));
  support::write_file_atomic(path, csv_text(table));
}

}  // namespace mutwo::experiments
