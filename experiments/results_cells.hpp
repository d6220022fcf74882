#pragma once
// Reading the results database's cells with their types and ranges checked. SQLite keeps any value
// in any column (a REAL 1.5 or a TEXT 'abc' in an INTEGER column, or a value the schema's CHECK
// refuses when another program wrote the file with the checks off), and sqlite3_column_int64 would
// turn it into a wrong number without a word: 1.5 into 1, 'abc' into 0. Every reader of the tables
// (results_db.cpp, results_db_experiments.cpp, db_merge.cpp) reads through a CellReader; a bad cell
// throws ResultsDbError "results database 'D': table T, run R, column C = V: what is wrong".
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/results_db_error.hpp"
#include "experiments/sqlite.hpp"

namespace mutwo::experiments {

// The cells of the current row of a statement, one table's columns. Holds references: lives while
// the row is read.
class CellReader {
 public:
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

  // `row` names the row in messages: "run 3", "run 3, op 7", "experiment 'x'".
  CellReader(const sqlite::Connection& connection, const sqlite::Statement& statement, std::string_view table,
             std::string row)
      : connection_(connection), s_(statement), table_(table), row_(std::move(row)) {}

  // An INTEGER in [min, max].
  int64_t integer(int column, int64_t min, int64_t max = kMax) const {
    want(column, sqlite::Statement::Type::integer, "an integer");
    const int64_t v = s_.int64(column);
    if (v < min || v > max) {
      fail(column, max == kMax ? fmt::format("must be >= {}", min)
                               : fmt::format("must be between {} and {}", min, max));
    }
    return v;
  }
  int32_t int32(int column, int32_t min) const {
    return static_cast<int32_t>(integer(column, min, std::numeric_limits<int32_t>::max()));
  }
  // An INTEGER 0 or 1.
  bool flag(int column) const {
    want(column, sqlite::Statement::Type::integer, "an integer");
    const int64_t v = s_.int64(column);
    if (v != 0 && v != 1) fail(column, "must be 0 or 1");
    return v == 1;
  }
  // A finite REAL (or an INTEGER, which a REAL column holds as such only when written by hand) in
  // [min, max].
  double real(int column, double min = -std::numeric_limits<double>::max(),
              double max = std::numeric_limits<double>::max()) const {
    const sqlite::Statement::Type t = s_.type(column);
    if (t != sqlite::Statement::Type::real && t != sqlite::Statement::Type::integer)
      fail(column, fmt::format("not a number (a {} value)", type_name(t)));
    const double v = s_.real(column);
    if (!std::isfinite(v)) fail(column, "not a finite number");
    if (v < min || v > max) fail(column, fmt::format("must be between {} and {}", min, max));
    return v;
  }
  // A TEXT.
  std::string text(int column) const {
    want(column, sqlite::Statement::Type::text, "text");
    return s_.text(column);
  }
  // A TEXT that is one of `valid`.
  std::string one_of(int column, std::initializer_list<std::string_view> valid) const {
    std::string v = text(column);
    for (std::string_view ok : valid) {
      if (v == ok) return v;
    }
    fail(column, fmt::format("must be one of {}", fmt::join(valid, ", ")));
  }

  [[noreturn]] void fail(int column, std::string_view what) const {
    throw ResultsDbError(fmt::format("results database '{}': table {}, {}, column {} = {}: {}",
                                     connection_.path().string(), table_, row_, s_.column_name(column),
                                     shown(column), what));
  }

 private:
  static std::string_view type_name(sqlite::Statement::Type t) {
    switch (t) {
      case sqlite::Statement::Type::integer:
        return "INTEGER";
      case sqlite::Statement::Type::real:
        return "REAL";
      case sqlite::Statement::Type::text:
        return "TEXT";
      case sqlite::Statement::Type::blob:
        return "BLOB";
      case sqlite::Statement::Type::null:
        break;
    }
    return "NULL";
  }

  void want(int column, sqlite::Statement::Type type, std::string_view noun) const {
    const sqlite::Statement::Type t = s_.type(column);
    if (t != type) fail(column, fmt::format("not {} (a {} value)", noun, type_name(t)));
  }

  // The value as a message shows it: 1.5, -100, 'abc' (long text cut), NULL, a BLOB's size.
  std::string shown(int column) const {
    switch (s_.type(column)) {
      case sqlite::Statement::Type::integer:
        return std::to_string(s_.int64(column));
      case sqlite::Statement::Type::real:
        return fmt::format("{}", s_.real(column));
      case sqlite::Statement::Type::text: {
        const std::string v = s_.text(column);
        constexpr size_t kShown = 60;
        return v.size() <= kShown ? fmt::format("'{}'", v) : fmt::format("'{}...'", v.substr(0, kShown));
      }
      case sqlite::Statement::Type::blob:
        return fmt::format("a BLOB of {} bytes", s_.text(column).size());
      case sqlite::Statement::Type::null:
        break;
    }
    return "NULL";
  }

  const sqlite::Connection& connection_;
  const sqlite::Statement& s_;
  std::string_view table_;
  std::string row_;
};

}  // namespace mutwo::experiments
