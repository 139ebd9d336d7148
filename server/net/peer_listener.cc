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

absl::StatusOr<std::unique_ptr<PeerListener>> PeerListener::Create(
    int listen_fd, grpc::Server* server) {
  absl::StatusOr<std::unique_ptr<Acceptor>> acceptor =
      Acceptor::Create(listen_fd);
  if (!acceptor.ok()) return acceptor.status();
  return std::unique_ptr<PeerListener>(
      new PeerListener(*std::move(acceptor), server));
}

void PeerListener::Start() {
  thread_ = std::thread([this] { Accept(); });
}

void PeerListener::Accept() {
  int fd;
  while ((fd = acceptor_->Accept(SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
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
  acceptor_->Stop();
  if (thread_.joinable()) thread_.join();
}

PeerListener::~PeerListener() { Stop(); }

}  // namespace jitcache
