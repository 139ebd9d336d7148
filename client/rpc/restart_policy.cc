#include "client/rpc/restart_policy.h"

#include <algorithm>
#include <string>

#include "absl/time/clock.h"

namespace jitcache {

bool DaemonUnreachable(const grpc::Status& s, absl::Time deadline) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) return true;
  return s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
         absl::Now() >= deadline;
}

bool DaemonStopping(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::CANCELLED ||
         (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
          s.error_message().find("shutting down") != std::string::npos);
}

bool Restarting(const grpc::Status& s, bool reached) {
  return DaemonStopping(s) ||
         (reached && s.error_code() == grpc::StatusCode::UNAVAILABLE);
}

absl::Duration RetryBackoff(int attempt) {
  return absl::Milliseconds(std::min(10 << std::min(attempt, 8), 200));
}

}  // namespace jitcache
