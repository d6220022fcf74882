#include "experiments/sqlite.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <cctype>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace mutwo::experiments::sqlite {
namespace {

std::string quoted(const std::filesystem::path& path) {
  return fmt::format("'{}'", path.string());
}

bool may_write(const std::filesystem::path& path) {
  return ::access(path.c_str(), W_OK) == 0;
}

std::filesystem::path folder_of(const std::filesystem::path& path) {
  const std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

// RFC 3986 percent-encoding of every byte but the unreserved ones and '/': SQLite reads '?', '#' and
// '%' in a file: URI as syntax.
std::string file_uri(const std::filesystem::path& path, std::string_view query) {
  std::string uri = "file:";
  for (const unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?" + std::string(query);
}

}  // namespace

void Connection::Closer::operator()(sqlite3* db) const {
  // sqlite3_close_v2 defers the close until every statement is finalized; it cannot fail here.
  sqlite3_close_v2(db);
}

Connection::Connection(std::filesystem::path path, sqlite3* db) : path_(std::move(path)), db_(db) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Connection Connection::open(const std::filesystem::path& path, Mode mode) {
  std::error_code ec;
  if (mode != Mode::read_write_create && !std::filesystem::exists(path, ec)) {
    throw ResultsDbError(fmt::format("results database {} does not exist", quoted(path)));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw ResultsDbError(fmt::format("results database {} is a directory, not a file", quoted(path)));
  }
  int flags = 0;
  std::string name = path.string();
  switch (mode) {
    case Mode::read_write_create:
      flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
    case Mode::read_write:
      flags = SQLITE_OPEN_READWRITE;
      break;
    case Mode::read_only: {
      const std::filesystem::path wal = path.string() + "-wal";
      if (may_write(path) && may_write(folder_of(path))) {
        flags = SQLITE_OPEN_READWRITE;
      } else if (!std::filesystem::exists(wal, ec)) {
        flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
        name = file_uri(path, "immutable=1");
      } else {
        if (!may_write(folder_of(path)) && !std::filesystem::exists(path.string() + "-shm", ec)) {
          throw ResultsDbError(fmt::format(
              "results database {} cannot be read: a writer left {} beside it, and SQLite must then make "
              "its -shm file in {}, which this user cannot write to",
              quoted(path), quoted(wal), quoted(folder_of(path))));
        }
        flags = SQLITE_OPEN_READONLY;
      }
      break;
    }
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  Connection connection(path, raw);  // owns raw even when opening failed
  if (rc != SQLITE_OK) {
    if (raw == nullptr) throw ResultsDbError(fmt::format("results database {}: out of memory", quoted(path)));
    connection.fail("cannot open");
  }
  sqlite3_extended_result_codes(raw, 1);
  return connection;
}

void Connection::fail(std::string_view context) const {
  const int code = sqlite3_errcode(db_.get());
  const std::string message = sqlite3_errmsg(db_.get());
  switch (code) {
    case SQLITE_NOTADB:
      throw ResultsDbError(
          fmt::format("results database {} is not a SQLite database ({})", quoted(path_), message));
    case SQLITE_CORRUPT:
      throw ResultsDbError(
          fmt::format("results database {} is corrupt ({}; {})", quoted(path_), message, context));
    case SQLITE_CANTOPEN:
      throw ResultsDbError(fmt::format("results database {} cannot be opened ({})", quoted(path_), message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw ResultsDbBusyError(fmt::format("results database {}: {}: {} (another connection kept it locked)",
                                       quoted(path_), context, message));
    default:
      throw ResultsDbError(fmt::format("results database {}: {}: {}", quoted(path_), context, message));
  }
}

void Connection::exec(std::string_view sql, std::string_view context) const {
  const std::string text(sql);
  if (sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(context);
}

Statement Connection::prepare(std::string_view sql, std::string_view context) const {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK) {
    fail(context);
  }
  return Statement(this, raw, std::string(context));
}

std::string Connection::query_text(std::string_view sql, std::string_view context) const {
  Statement statement = prepare(sql, context);
  std::string value = statement.step() ? statement.text(0) : std::string();
  statement.run();
  return value;
}

void Connection::set_busy_timeout(std::chrono::milliseconds timeout) const {
  sqlite3_busy_timeout(db_.get(), static_cast<int>(timeout.count()));
}

int64_t Connection::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_.get());
}

void Statement::Finalizer::operator()(sqlite3_stmt* stmt) const {
  sqlite3_finalize(stmt);
}

Statement::Statement(const Connection* connection, sqlite3_stmt* stmt, std::string context)
    : connection_(connection), stmt_(stmt), context_(std::move(context)) {}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_.get(), index, value) != SQLITE_OK) fail();
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_.get(), index, value) != SQLITE_OK) fail();
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the text, so the caller's string may go away before step(). An
  // empty string_view may have a null data(), which SQLite would bind as NULL instead of ''.
  const char* data = value.data() != nullptr ? value.data() : "";
  if (sqlite3_bind_text64(stmt_.get(), index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8) !=
      SQLITE_OK) {
    fail();
  }
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail();
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());  // reports the previous step's error, already thrown by step()
  sqlite3_clear_bindings(stmt_.get());
}

Statement::Type Statement::type(int column) const {
  switch (sqlite3_column_type(stmt_.get(), column)) {
    case SQLITE_INTEGER:
      return Type::integer;
    case SQLITE_FLOAT:
      return Type::real;
    case SQLITE_TEXT:
      return Type::text;
    case SQLITE_BLOB:
      return Type::blob;
    default:
      return Type::null;
  }
}

std::string Statement::column_name(int column) const {
  const char* name = sqlite3_column_name(stmt_.get(), column);
  return name == nullptr ? std::string() : std::string(name);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}

std::string Statement::text(int column) const {
  const unsigned char* data = sqlite3_column_text(stmt_.get(), column);
  if (data == nullptr) return {};
  const int bytes = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(bytes));
}

Transaction::Transaction(const Connection& connection) : connection_(connection) {
  connection_.exec("BEGIN IMMEDIATE", "cannot begin a write transaction");
}

Transaction::~Transaction() {
  if (!open_) return;
  try {
    connection_.exec("ROLLBACK", "cannot roll back");
  } catch (const ResultsDbError&) {
    // SQLite rolls back by itself after some errors; a failed ROLLBACK then means nothing is open.
  }
}

void Transaction::commit() {
  connection_.exec("COMMIT", "cannot commit");
  open_ = false;
}

}  // namespace mutwo::experiments::sqlite
