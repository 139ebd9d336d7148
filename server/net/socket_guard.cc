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
