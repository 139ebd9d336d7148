#include "server/net/peer_listener.h"

#include <fcntl.h>
#include <grp.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/log.h"

namespace jitcache {

bool IsAdmin(const PeerCredentials& peer, const AdminPolicy& policy) {
  if (peer.uid == 0 || peer.uid == policy.daemon_uid) return true;
  if (!policy.admin_gid.has_value()) return false;
  if (peer.gid == *policy.admin_gid) return true;
  // Supplementary groups belong to the user, not the connection: look them
  // up from the user database by the kernel's uid.
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(peer.uid, &pw, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr) {
    return false;
  }
  int count = 64;
  std::vector<gid_t> groups(count);
  if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
    groups.resize(count);
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
      return false;
    }
  }
  groups.resize(count);
  for (gid_t g : groups) {
    if (g == *policy.admin_gid) return true;
  }
  return false;
}

std::optional<PeerCredentials> PeerOf(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    JITCACHE_LOG(Warning) << "SO_PEERCRED: " << strerror(errno);
    return std::nullopt;
  }
  return PeerCredentials{cred.uid, cred.gid, cred.pid};
}

absl::StatusOr<int> ListenUnix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path ", path, " is too long (",
                     sizeof(addr.sun_path) - 1, " bytes at most)"));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 512) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen on unix socket ",
                                               path, ": ", strerror(err)));
  }
  return fd;
}

absl::StatusOr<std::unique_ptr<PeerListener>> PeerListener::Start(
    int listen_fd, grpc::Server* server) {
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) {
    close(listen_fd);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  auto listener = std::unique_ptr<PeerListener>(
      new PeerListener(listen_fd, wake[0], wake[1], server));
  listener->thread_ = std::thread([l = listener.get()] { l->Accept(); });
  return listener;
}

void PeerListener::Accept() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      JITCACHE_LOG(Error) << "accept loop: poll: " << strerror(errno);
      return;
    }
    if (fds[1].revents != 0) return;
    const int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      // Out of descriptors, say: back off rather than spin.
      JITCACHE_LOG(Warning) << "accept: " << strerror(errno);
      poll(nullptr, 0, 100);
      continue;
    }
    std::optional<PeerCredentials> peer = PeerOf(fd);
    if (!peer.has_value()) {
      close(fd);  // nobody is served anonymously
      continue;
    }
    {
      // Registered before gRPC sees the connection; a number is reused only
      // after gRPC has closed the connection that had it.
      absl::MutexLock lock(&mu_);
      peers_[fd] = *peer;
    }
    grpc::AddInsecureChannelFromFd(server_, fd);
  }
}

std::optional<PeerCredentials> PeerListener::Lookup(
    absl::string_view peer) const {
  int fd = -1;
  if (!absl::ConsumePrefix(&peer, "fd:") || !absl::SimpleAtoi(peer, &fd)) {
    return std::nullopt;
  }
  absl::ReaderMutexLock lock(&mu_);  // every request; writes only on accept
  auto it = peers_.find(fd);
  if (it == peers_.end()) return std::nullopt;
  return it->second;
}

void PeerListener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  const char byte = 0;
  (void)!write(wake_write_, &byte, 1);
  thread_.join();
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

PeerListener::~PeerListener() { Stop(); }

}  // namespace jitcache
