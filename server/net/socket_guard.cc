#include "server/net/socket_guard.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace jitcache {
namespace {

// True when something accepts connections on the socket at `path`.
bool SomeoneListens(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool live =
      connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return live;
}

// Removes the sockets a daemon of `socket_path` was giving birth to when
// it died (unix_listen.h: ".BASE.RANDOM" beside the path, for the gRPC
// socket and PATH.hit): the caller holds the path's lock, so no live
// daemon is making one.
void RemoveUnbornSockets(const std::string& socket_path) {
  const std::filesystem::path path(socket_path);
  std::error_code ec;
  std::filesystem::directory_iterator entries(
      path.has_parent_path() ? path.parent_path() : ".", ec);
  if (ec) return;
  const std::string base = path.filename().string();
  for (const auto& entry : entries) {
    const std::string name = entry.path().filename().string();
    for (const std::string& born : {base, base + ".hit"}) {
      const std::string prefix = "." + born + ".";
      if (name.size() != prefix.size() + 8 || name.rfind(prefix, 0) != 0) {
        continue;
      }
      struct stat st {};
      if (lstat(entry.path().c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
        unlink(entry.path().c_str());
      }
    }
  }
}

std::string ReadOwner(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  return n > 0 ? std::string(
                     absl::StripAsciiWhitespace(absl::string_view(buf, n)))
               : "unknown";
}

}  // namespace

absl::StatusOr<std::unique_ptr<SocketGuard>> SocketGuard::Claim(
    const std::string& socket_path) {
  if (socket_path.empty())
    return absl::InvalidArgumentError("socket path is empty");
  if (socket_path.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "socket path ", socket_path, " is longer than the ",
        sizeof(sockaddr_un::sun_path) - 1, " bytes a Unix socket allows"));
  }
  const std::filesystem::path parent =
      std::filesystem::path(socket_path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create socket directory ", parent.string(), ": ",
                       ec.message()));
    }
  }
  const std::string lock_path = socket_path + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open ", lock_path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const std::string owner = ReadOwner(fd);
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("socket ", socket_path,
                     " is in use by a live jitcached (pid ", owner, ")"));
  }
  RemoveUnbornSockets(socket_path);
  struct stat st {};
  if (lstat(socket_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      close(fd);
      return absl::FailedPreconditionError(absl::StrCat(
          socket_path, " exists and is not a socket; refusing to replace it"));
    }
    if (SomeoneListens(socket_path)) {
      close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("socket ", socket_path, " is in use by another server"));
    }
    // Left behind by a daemon that died: reclaim it.
    if (unlink(socket_path.c_str()) != 0) {
      close(fd);
      return absl::PermissionDeniedError(
          absl::StrCat("cannot remove stale socket ", socket_path, ": ",
                       std::strerror(errno)));
    }
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  // The pid only serves the error message of a second daemon: best effort.
  if (ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t written = pwrite(fd, pid.data(), pid.size(), 0);
  }
  return std::unique_ptr<SocketGuard>(new SocketGuard(socket_path, fd));
}

SocketGuard::~SocketGuard() {
  unlink(path_.c_str());
  close(lock_fd_);  // releases the lock
}

}  // namespace jitcache
