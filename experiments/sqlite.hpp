#pragma once
// A small RAII layer over SQLite's C API: one connection, prepared statements, transactions.
// Every failure throws ResultsDbError naming the database path and what was being done, so callers
// never see a raw SQLite result code.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "experiments/results_db_error.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace mutwo::experiments::sqlite {

class Statement;

// One open database connection (sqlite3*), closed on destruction. Movable, not copyable; statements
// and transactions must not outlive it or live across a move of it.
class Connection {
 public:
  enum class Mode {
    read_write_create,  // create the file when it is absent
    read_write,         // the file must exist
    // The file must exist; nothing is ever written, and nothing is left beside it. SQLite's own
    // read-only connection is not that: on a WAL file it creates -wal and -shm, leaves them when it
    // closes, and fails in a folder the user cannot write to. So a file this process may write (in a
    // folder it may write) is opened read-write and only read, whose close removes them; any other
    // without a -wal is opened immutable (nothing created; a writer with rights to it would have to
    // be another user, writing while this one reads); one with a -wal (a writer is at work, or died)
    // read-only, or refused naming the folder when its -shm cannot be made.
    read_only,
  };

  // Opens path; throws ResultsDbError when SQLite cannot (an absent file without read_write_create
  // is reported as "does not exist"). Opening reads nothing yet: a file that is not a database is
  // found by the first statement.
  static Connection open(const std::filesystem::path& path, Mode mode);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs SQL that returns no rows we keep (several statements separated by ';' allowed).
  void exec(std::string_view sql, std::string_view context) const;
  Statement prepare(std::string_view sql, std::string_view context) const;
  // The single text value of a one-row query (a PRAGMA's answer, say); "" when it returns no row.
  std::string query_text(std::string_view sql, std::string_view context) const;
  // Lets a statement that finds the database locked retry for up to timeout before failing.
  void set_busy_timeout(std::chrono::milliseconds timeout) const;
  int64_t last_insert_rowid() const;

  const std::filesystem::path& path() const { return path_; }

  // Throws ResultsDbError for the connection's latest error, classified: "is not a SQLite database
  // (...)", "is corrupt (...)", "is locked by another writer (...)" or "<context>: <sqlite message>".
  [[noreturn]] void fail(std::string_view context) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  Connection(std::filesystem::path path, sqlite3* db);

  std::filesystem::path path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

// A prepared statement, finalized on destruction. Parameters are numbered from 1, columns from 0.
class Statement {
 public:
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int32_t value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, bool value) { return bind(index, static_cast<int64_t>(value ? 1 : 0)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  // Binds values to parameters 1, 2, ... in order.
  template <typename... Values>
  Statement& bind_all(const Values&... values) {
    int index = 0;
    (bind(++index, values), ...);
    return *this;
  }

  // Advances: true when a row is ready to read, false when the statement is done.
  bool step();
  // Runs a statement that returns no rows.
  void run() {
    while (step()) {
    }
  }
  // Makes the statement runnable again with new bindings.
  void reset();

  // The storage class of a column's value in the current row. SQLite keeps any value in any column
  // (a REAL or TEXT in an INTEGER column), so readers that trust a type check it first
  // (results_cells.hpp).
  enum class Type { integer, real, text, blob, null };
  Type type(int column) const;
  // The column's name in the result ("step_time_ns" for "m.step_time_ns").
  std::string column_name(int column) const;

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;

 private:
  friend class Connection;
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  Statement(const Connection* connection, sqlite3_stmt* stmt, std::string context);
  [[noreturn]] void fail() const { connection_->fail(context_); }

  const Connection* connection_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string context_;  // "cannot insert into runs": what a failure message says was being done
};

// BEGIN IMMEDIATE on construction (takes the write lock now, waiting up to the busy timeout, so a
// transaction never fails half way for want of it); ROLLBACK on destruction unless commit() ran.
class Transaction {
 public:
  explicit Transaction(const Connection& connection);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();

 private:
  const Connection& connection_;
  bool open_ = true;
};

}  // namespace mutwo::experiments::sqlite
