#ifndef JITCACHE_CLIENT_RPC_RESTART_POLICY_H_
#define JITCACHE_CLIENT_RPC_RESTART_POLICY_H_

#include <grpcpp/support/status.h>

#include <atomic>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace jitcache {

// When a failed call is asked again, and when a compile is better done in
// the caller's process: one policy for blocking and asynchronous calls.
// Pure functions; any thread.

// How long a compile waits for a daemon that is restarting.
inline constexpr absl::Duration kRestartWait = absl::Seconds(10);

// The daemon is not there (no socket, refused, shutting down) or did not
// answer before this call's own deadline: cases where compiling locally is
// the better answer. A DEADLINE_EXCEEDED the daemon sent (its compile-time
// limit) arrives before that deadline, and is not one.
bool DaemonUnreachable(const grpc::Status& s, absl::Time deadline);

// A daemon that is stopping: its own answer to compiles it cancels, or the
// CANCELLED that gRPC gives a call that reached it as it shut down. (Only
// for calls that never cancel themselves.)
bool DaemonStopping(const grpc::Status& s);

// Whether a failed call is worth asking again while the daemon restarts:
// one that is stopping (socket activation keeps its socket, and the next
// one answers), and, where this process has reached the daemon before
// (`reached`), one whose socket is gone for the moment (a restart outside
// socket activation: the next daemon binds it within seconds). A process
// that never reached a daemon does not wait for one.
bool Restarting(const grpc::Status& s, bool reached);

// The pause before retry `attempt` (0, 1, ...): 10 ms doubling to 200 ms.
absl::Duration RetryBackoff(int attempt);

// Whether a call that failed with `s` is asked again as retry `attempt`:
// the daemon is restarting, and the pause before it ends before
// `retry_until`. The one decision of every call's retries, blocking
// (AskThroughRestarts) or asynchronous (which waits on an alarm instead).
inline bool AskAgain(const grpc::Status& s, bool reached, int attempt,
                     absl::Time retry_until) {
  return Restarting(s, reached) &&
         absl::Now() + RetryBackoff(attempt) < retry_until;
}

// A blocking call's retries: `ask()` (one more attempt, on a new context)
// after each pause, while AskAgain says so; the last attempt's status.
// `reached` is read before each: another thread may reach the daemon
// meanwhile.
template <typename Ask>
grpc::Status AskThroughRestarts(grpc::Status status,
                                const std::atomic<bool>& reached,
                                absl::Time retry_until, Ask ask) {
  for (int attempt = 0; AskAgain(status, reached.load(), attempt, retry_until);
       ++attempt) {
    absl::SleepFor(RetryBackoff(attempt));
    status = ask();
  }
  return status;
}

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_RESTART_POLICY_H_
