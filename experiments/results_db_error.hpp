#pragma once
// The error every results-database failure throws; cli/ prints it and exits 1.
#include "support/error.hpp"

namespace mutwo::experiments {

// A results database that cannot be opened, read or written. The message names the database path
// and what is wrong: not a SQLite file, corrupt, an unknown schema version, a missing table, or the
// table a failed statement was reading or writing.
class ResultsDbError : public Error {
 public:
  using Error::Error;
};

// The database stayed locked by another connection past the busy timeout (SQLITE_BUSY / LOCKED).
class ResultsDbBusyError : public ResultsDbError {
 public:
  using ResultsDbError::ResultsDbError;
};

}  // namespace mutwo::experiments
