#include "server/net/hit_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/fd_io.h"
#include "common/length_frame.h"
#include "common/log.h"

namespace jitcache {

absl::StatusOr<std::unique_ptr<HitSocket>> HitSocket::Start(
    const std::string& path, size_t max_request_bytes, Answer answer,
    int threads, absl::Duration io_timeout) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("hit socket path ", path, " is too long"));
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket(AF_UNIX) failed");
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  // The caller owns the path (its lock was taken with the gRPC socket's):
  // whatever is there was left by a daemon that died.
  unlink(path.c_str());
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 128) != 0) {
    const std::string error = std::strerror(errno);
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", path, ": ", error));
  }
  return Serve(path, fd, max_request_bytes, std::move(answer), threads,
               io_timeout);
}

absl::StatusOr<std::unique_ptr<HitSocket>> HitSocket::Adopt(
    int listen_fd, size_t max_request_bytes, Answer answer, int threads,
    absl::Duration io_timeout) {
  return Serve("", listen_fd, max_request_bytes, std::move(answer), threads,
               io_timeout);
}

absl::StatusOr<std::unique_ptr<HitSocket>> HitSocket::Serve(
    std::string path, int listen_fd, size_t max_request_bytes, Answer answer,
    int threads, absl::Duration io_timeout) {
  absl::StatusOr<std::unique_ptr<Acceptor>> acceptor =
      Acceptor::Create(listen_fd);
  if (!acceptor.ok()) return acceptor.status();
  auto socket = std::unique_ptr<HitSocket>(
      new HitSocket(std::move(path), *std::move(acceptor), max_request_bytes,
                    std::move(answer), io_timeout));
  {
    absl::MutexLock lock(&socket->mu_);
    for (int i = 0; i < std::clamp(threads, 1, kMaxThreads); ++i) {
      socket->threads_.emplace_back([raw = socket.get()] { raw->ServeLoop(); });
    }
  }
  socket->acceptor_thread_ =
      std::thread([raw = socket.get()] { raw->AcceptLoop(); });
  return socket;
}

namespace {

// Waits until `fd` is ready for `events` or `deadline` passes.
bool WaitReady(int fd, short events, absl::Time deadline) {
  while (true) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// Appends exactly `size` bytes from `fd` to `out`, by `deadline`; the
// buffer grows with what arrives.
bool ReadBy(int fd, size_t size, absl::Time deadline, std::string* out) {
  size_t got = 0;
  char chunk[65536];
  while (got < size) {
    if (!WaitReady(fd, POLLIN, deadline)) return false;
    const ssize_t n = read(fd, chunk, std::min(sizeof(chunk), size - got));
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    out->append(chunk, static_cast<size_t>(n));
    got += static_cast<size_t>(n);
  }
  return true;
}

bool WriteBy(int fd, const char* data, size_t size, absl::Time deadline) {
  while (size > 0) {
    if (!WaitReady(fd, POLLOUT, deadline)) return false;
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void HitSocket::AcceptLoop() {
  int fd;
  while ((fd = acceptor_->Accept(SOCK_CLOEXEC)) >= 0) {
    std::optional<PeerCredentials> peer = PeerOf(fd);
    if (!peer.has_value()) {
      close(fd);
      continue;
    }
    absl::MutexLock lock(&mu_);
    int& active = per_user_[peer->uid];
    if (active >= kMaxPerUser) {
      // This user holds enough of the socket already: the client asks
      // gRPC, which has limits of its own.
      close(fd);
      continue;
    }
    ++active;
    waiting_.push_back({fd, peer->uid, *peer, absl::Now() + io_timeout_});
    if (idle_ == 0 && static_cast<int>(threads_.size()) < kMaxThreads) {
      threads_.emplace_back([this] { ServeLoop(); });
    }
  }
}

void HitSocket::ServeLoop() {
  while (true) {
    Connection connection;
    {
      absl::MutexLock lock(&mu_);
      ++idle_;
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_serving_ || !waiting_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      --idle_;
      if (waiting_.empty()) return;  // stopping
      connection = waiting_.front();
      waiting_.pop_front();
    }
    Handle(connection);
    close(connection.fd);
    absl::MutexLock lock(&mu_);
    if (--per_user_[connection.uid] == 0) per_user_.erase(connection.uid);
  }
}

void HitSocket::Handle(const Connection& connection) {
  const int fd = connection.fd;
  std::string header;
  if (!ReadBy(fd, frame::kHeaderBytes, connection.deadline, &header)) return;
  const uint32_t length = frame::LengthOf(header.data());
  const char kAskGrpc = 1;
  // A stalled peer has had its time; answering takes at most this long.
  const absl::Time write_by = absl::Now() + io_timeout_;
  if (length > max_request_bytes_) {
    WriteBy(fd, &kAskGrpc, 1, write_by);  // the gRPC path names the limit
    return;
  }
  std::string request;
  if (!ReadBy(fd, length, connection.deadline, &request)) return;
  std::shared_ptr<const std::string> response =
      answer_(request, connection.peer);
  const absl::Time respond_by = absl::Now() + io_timeout_;
  if (response == nullptr) {
    WriteBy(fd, &kAskGrpc, 1, respond_by);
    return;
  }
  if (response->size() > frame::kMaxPayloadBytes) {
    WriteBy(fd, &kAskGrpc, 1, respond_by);
    return;
  }
  char head[1 + frame::kHeaderBytes] = {0};  // 0: a hit, framed
  frame::PutHeader(head + 1, static_cast<uint32_t>(response->size()));
  if (!WriteBy(fd, head, sizeof(head), respond_by)) return;
  WriteBy(fd, response->data(), response->size(), respond_by);
}

void HitSocket::Stop() {
  if (stopping_.exchange(true)) return;
  acceptor_->Stop();
  if (acceptor_thread_.joinable()) acceptor_thread_.join();
  std::vector<std::thread> threads;
  {
    // Connections already accepted are served (each within its own
    // deadline) before the threads end: a hit under way is answered, not
    // cut off. Those not accepted yet wait in the backlog for the next
    // daemon under socket activation, or fail over to gRPC.
    absl::MutexLock lock(&mu_);
    stop_serving_ = true;
    threads = std::move(threads_);
  }
  for (std::thread& t : threads) {
    if (t.joinable()) t.join();
  }
  if (!path_.empty()) unlink(path_.c_str());
}

HitSocket::~HitSocket() { Stop(); }

}  // namespace jitcache
