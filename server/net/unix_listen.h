#ifndef JITCACHE_SERVER_NET_UNIX_LISTEN_H_
#define JITCACHE_SERVER_NET_UNIX_LISTEN_H_

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace jitcache {

// Who may connect to a socket file: its group and mode (--socket_group,
// --socket_mode); unset fields stay as bind(2) and the umask leave them.
struct SocketAccess {
  std::optional<gid_t> group;
  std::optional<mode_t> mode;
};

// Binds a Unix stream socket at `path` with its final access and listens
// (the caller has claimed the path, see SocketGuard). Returns the listening
// fd.
//
// The socket is born under a private name beside `path`, given its group
// and mode there, made to listen, and only then renamed onto `path`: so
// nobody ever sees `path` with another mode or group, and whoever finds it
// can connect at once. (A chmod after bind leaves a window in which group
// members are refused; the umask is process-wide, and other threads create
// files meanwhile.) A leftover file at `path` is replaced atomically; a
// private name left by a daemon that died is removed by the next one
// (SocketGuard::Claim).
absl::StatusOr<int> ListenUnix(const std::string& path,
                               const SocketAccess& access = {});

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_UNIX_LISTEN_H_
