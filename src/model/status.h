// Status and Result: how parsing and I/O report failure without exceptions.
//
// A Status is ok or carries a code and a message that says what failed and where
// (file:line:column: field: what). Result<T> is a value or a Status. Both are cheap
// to return when ok. Modelled on leveldb's Status.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace gantry {

class Status {
 public:
  enum class Code { kOk = 0, kInvalidArgument, kNotFound, kOutOfRange, kIoError, kFailed };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status Invalid(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status OutOfRange(std::string msg) { return Status(Code::kOutOfRange, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status Failed(std::string msg) { return Status(Code::kFailed, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a status with the same code whose message is "prefix: message"; used to add
  // the location (file, line, field) as an error travels up.
  Status WithPrefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

  std::string ToString() const { return ok() ? "OK" : message_; }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok()
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace gantry

// Returns the status from the enclosing function when it is not ok.
#define GANTRY_RETURN_IF_ERROR(expr) \
  do {                               \
    ::gantry::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)
