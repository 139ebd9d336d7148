#ifndef JITCACHE_SERVER_SYSTEMD_LISTEN_SOCKETS_H_
#define JITCACHE_SERVER_SYSTEMD_LISTEN_SOCKETS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace jitcache {

// The listening sockets a service manager passed (socket activation:
// LISTEN_FDS/LISTEN_PID, as systemd and systemd-socket-activate set them).
// Each is told apart by its bound path: the one ending in ".hit" answers
// hits (see FramedSocket), the other serves gRPC. The daemon never binds,
// unlinks or shuts these down: the manager owns them, and connections that
// arrive while the daemon restarts wait in their backlog.
struct InheritedSockets {
  int grpc_fd = -1;
  std::string grpc_path;
  std::optional<int> hit_fd;
};

// nullopt when the daemon was not socket-activated. An error when it was
// but the sockets are not what it serves (no Unix stream socket, two of a
// kind, a socket not yet listening), naming what it got. The environment
// variables are unset either way, so that children do not inherit them.
absl::StatusOr<std::optional<InheritedSockets>> TakeInheritedSockets();

}  // namespace jitcache

#endif  // JITCACHE_SERVER_SYSTEMD_LISTEN_SOCKETS_H_
