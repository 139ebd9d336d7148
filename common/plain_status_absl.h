#ifndef JITCACHE_COMMON_PLAIN_STATUS_ABSL_H_
#define JITCACHE_COMMON_PLAIN_STATUS_ABSL_H_

// PlainStatus to absl::Status, for the code that loads Abseil anyway (the
// daemon, libjitcache).
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/plain_status.h"

namespace jitcache {

inline absl::Status ToAbsl(const PlainStatus& status, absl::StatusCode code) {
  return status.ok() ? absl::OkStatus() : absl::Status(code, status.message());
}

template <typename T>
absl::StatusOr<T> ToAbsl(PlainStatusOr<T> result, absl::StatusCode code) {
  if (!result.ok()) return ToAbsl(result.status(), code);
  return *std::move(result);
}

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PLAIN_STATUS_ABSL_H_
