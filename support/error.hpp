#pragma once
// Typed errors thrown by mutwo libraries; cli/ catches them and exits non-zero.
#include <stdexcept>
#include <string>

namespace mutwo {

// Base of every error mutwo reports to a user: the message names the field and value at fault.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A Graph that breaks an invariant (ids, order, shapes, sizes).
class GraphError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be parsed or has the wrong format, version or field types.
class FormatError : public Error {
 public:
  using Error::Error;
};

// A name (model, op kind, dtype, optimizer, ...) that no registry knows.
class UnknownNameError : public Error {
 public:
  using Error::Error;
};

// Work stopped because its caller asked it to (Python's Ctrl-C), between steps: nothing half-done
// is kept or written.
class InterruptedError : public Error {
 public:
  using Error::Error;
};

}  // namespace mutwo
