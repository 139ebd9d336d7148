#include "server/net/unix_listen.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jitcache {
namespace {

// A name in `path`'s directory for the socket to be born under, that fits
// sun_path wherever `path` does: ".BASE.RANDOM" where that fits, else a
// random name no longer than BASE. bind(2) refuses a name that exists
// (EADDRINUSE), so a name another process holds is never taken from it:
// the caller draws again.
std::string PrivateNameBeside(const std::string& path) {
  constexpr size_t kMaxPath = sizeof(sockaddr_un::sun_path) - 1;
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 random{std::random_device{}()};
  auto draw = [&](size_t n) {
    std::string out(n, 'x');
    for (char& c : out) c = kChars[random() % (sizeof(kChars) - 1)];
    return out;
  };
  std::string name = absl::StrCat(dir, ".", base, ".", draw(8));
  if (name.size() <= kMaxPath) return name;
  // `path` itself fits: BASE's length has room (behind a dot where there
  // is room for one).
  if (base.size() < 2) return absl::StrCat(dir, draw(1));
  return absl::StrCat(dir, ".", draw(std::min<size_t>(base.size() - 1, 8)));
}

absl::StatusOr<sockaddr_un> AddressOf(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path ", path, " is too long (",
                     sizeof(addr.sun_path) - 1, " bytes at most)"));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// fchmod and fchown on a socket do not reach its file: the name it is bound
// to is changed instead, while it is still private.
absl::Status GiveAccess(const std::string& name, const std::string& path,
                        const SocketAccess& access) {
  if (access.group.has_value() && chown(name.c_str(), -1, *access.group) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("--socket_group: cannot give ", path,
                     " its group: ", std::strerror(errno)));
  }
  if (access.mode.has_value() && chmod(name.c_str(), *access.mode) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "--socket_mode: cannot set ", path, "'s mode: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> ListenUnix(const std::string& path,
                               const SocketAccess& access) {
  if (absl::StatusOr<sockaddr_un> final_addr = AddressOf(path);
      !final_addr.ok()) {
    return final_addr.status();
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  }
  std::string name;
  int err = EADDRINUSE;
  for (int attempt = 0; attempt < 16 && err == EADDRINUSE; ++attempt) {
    name = PrivateNameBeside(path);
    absl::StatusOr<sockaddr_un> addr = AddressOf(name);
    if (!addr.ok()) {
      close(fd);
      return addr.status();
    }
    err =
        bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0
            ? 0
            : errno;
  }
  if (err != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen on unix socket ",
                                               path, ": ", std::strerror(err)));
  }
  absl::Status done = GiveAccess(name, path, access);
  if (done.ok() && listen(fd, 512) != 0) {
    done = absl::UnavailableError(absl::StrCat(
        "cannot listen on unix socket ", path, ": ", std::strerror(errno)));
  }
  if (done.ok() && rename(name.c_str(), path.c_str()) != 0) {
    done = absl::UnavailableError(absl::StrCat(
        "cannot put unix socket ", path, " in place: ", std::strerror(errno)));
  }
  if (!done.ok()) {
    unlink(name.c_str());
    close(fd);
    return done;
  }
  return fd;
}

}  // namespace jitcache
