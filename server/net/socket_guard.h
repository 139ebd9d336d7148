#ifndef JITCACHE_SERVER_NET_SOCKET_GUARD_H_
#define JITCACHE_SERVER_NET_SOCKET_GUARD_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace jitcache {

// Claims a Unix socket path for one daemon. An advisory lock on PATH.lock
// decides who owns the path: a live daemon holds it (a second one is refused
// with FAILED_PRECONDITION naming the path and the owner's pid); a dead one
// does not, and its leftover socket file is removed, with the sockets it was
// giving birth to (unix_listen.h's private names). The socket file is
// removed again on destruction. Not thread-safe; one per daemon.
class SocketGuard {
 public:
  static absl::StatusOr<std::unique_ptr<SocketGuard>> Claim(
      const std::string& socket_path);
  ~SocketGuard();

  SocketGuard(const SocketGuard&) = delete;
  SocketGuard& operator=(const SocketGuard&) = delete;

  const std::string& path() const { return path_; }

 private:
  SocketGuard(std::string path, int lock_fd)
      : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::string path_;
  int lock_fd_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_SOCKET_GUARD_H_
