#ifndef JITCACHE_COMMON_PLAIN_STATUS_H_
#define JITCACHE_COMMON_PLAIN_STATUS_H_

// absl::Status's part that plain C++ code needs: ok, or a message saying
// why not. The code that front ends loading nothing but libc and libstdc++
// share with the daemon (the include scan, option parsing) reports with
// it; absl::Status itself would map Abseil's libraries into every process
// that preloads libnvrtc.so.13. Each function says which absl::StatusCode
// its errors stand for; ToAbsl (plain_status_absl.h) converts at the
// boundary. Value types.
#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>

namespace jitcache {

class PlainStatus {
 public:
  PlainStatus() = default;  // ok
  static PlainStatus Error(std::string message) {
    PlainStatus s;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return !message_.has_value(); }
  // "" when ok.
  const std::string& message() const {
    static const std::string kNone;
    return message_.has_value() ? *message_ : kNone;
  }
  friend bool operator==(const PlainStatus&, const PlainStatus&) = default;

 private:
  std::optional<std::string> message_;
};

inline std::ostream& operator<<(std::ostream& out, const PlainStatus& status) {
  return out << (status.ok() ? std::string("OK") : status.message());
}

template <typename T>
class PlainStatusOr {
 public:
  PlainStatusOr(T value) : value_(std::move(value)) {}  // NOLINT: as StatusOr
  // `status` must not be ok (as absl::StatusOr, which aborts).
  PlainStatusOr(PlainStatus status)  // NOLINT: as StatusOr
      : value_(std::move(status)) {
    assert(!std::get<PlainStatus>(value_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  PlainStatus status() const {
    return ok() ? PlainStatus() : std::get<PlainStatus>(value_);
  }
  T& operator*() & { return std::get<T>(value_); }
  const T& operator*() const& { return std::get<T>(value_); }
  T&& operator*() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &std::get<T>(value_); }
  const T* operator->() const { return &std::get<T>(value_); }

 private:
  std::variant<T, PlainStatus> value_;
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PLAIN_STATUS_H_
