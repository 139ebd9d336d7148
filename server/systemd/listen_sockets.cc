#include "server/systemd/listen_sockets.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace jitcache {
namespace {

// The path a Unix socket is bound to; empty for anything else.
std::string BoundPath(int fd) {
  sockaddr_un addr{};
  socklen_t length = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0 ||
      addr.sun_family != AF_UNIX || length <= offsetof(sockaddr_un, sun_path) ||
      addr.sun_path[0] == '\0') {
    return "";
  }
  return std::string(addr.sun_path,
                     strnlen(addr.sun_path, sizeof(addr.sun_path)));
}

}  // namespace

absl::StatusOr<std::optional<InheritedSockets>> TakeInheritedSockets() {
  const int count = sd_listen_fds(/*unset_environment=*/1);
  if (count < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "socket activation: bad LISTEN_FDS: ", std::strerror(-count)));
  }
  if (count == 0) return std::nullopt;
  InheritedSockets sockets;
  for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + count; ++fd) {
    const std::string path = BoundPath(fd);
    if (sd_is_socket_unix(fd, SOCK_STREAM, /*listening=*/1, nullptr, 0) <= 0 ||
        path.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "socket activation: fd ", fd,
          " is not a listening Unix stream socket bound to a path; "
          "jitcached serves ListenStream=/path sockets only"));
    }
    // Not inherited by the compilers or anything else the daemon starts.
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (absl::EndsWith(path, ".hit")) {
      if (sockets.hit_fd.has_value()) {
        return absl::FailedPreconditionError(
            absl::StrCat("socket activation: two framed sockets (", path, ")"));
      }
      sockets.hit_fd = fd;
    } else {
      if (sockets.grpc_fd >= 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "socket activation: two sockets for gRPC (", sockets.grpc_path,
            " and ", path, "); name the framed socket PATH.hit"));
      }
      sockets.grpc_fd = fd;
      sockets.grpc_path = path;
    }
  }
  if (sockets.grpc_fd < 0) {
    return absl::FailedPreconditionError(
        "socket activation: only a framed socket was passed; the gRPC socket "
        "(ListenStream=PATH) is needed too");
  }
  return sockets;
}

}  // namespace jitcache
