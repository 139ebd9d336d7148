#include "server/net/hit_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/fd_io.h"
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
  for (int i = 0; i < threads; ++i) {
    socket->threads_.emplace_back([raw = socket.get()] { raw->AcceptLoop(); });
  }
  return socket;
}

void HitSocket::AcceptLoop() {
  int connection;
  while ((connection = acceptor_->Accept(SOCK_CLOEXEC)) >= 0) {
    Handle(connection);
    close(connection);
  }
}

void HitSocket::Handle(int connection) {
  const timeval timeout{static_cast<time_t>(absl::ToInt64Seconds(io_timeout_)),
                        static_cast<suseconds_t>(
                            absl::ToInt64Microseconds(io_timeout_) % 1000000)};
  setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  uint8_t header[4];
  if (!ReadFully(connection, reinterpret_cast<char*>(header), sizeof(header))) {
    return;
  }
  const uint32_t length = header[0] | (header[1] << 8) | (header[2] << 16) |
                          (uint32_t{header[3]} << 24);
  const char kAskGrpc = 1;
  if (length > max_request_bytes_) {
    WriteFully(connection, &kAskGrpc, 1);  // the gRPC path names the limit
    return;
  }
  std::string request(length, '\0');
  if (!ReadFully(connection, request.data(), length)) return;
  std::optional<PeerCredentials> peer = PeerOf(connection);
  if (!peer.has_value()) return;
  std::optional<std::string> response = answer_(request, *peer);
  if (!response.has_value()) {
    WriteFully(connection, &kAskGrpc, 1);
    return;
  }
  const uint32_t size = static_cast<uint32_t>(response->size());
  const char frame[5] = {
      0, static_cast<char>(size), static_cast<char>(size >> 8),
      static_cast<char>(size >> 16), static_cast<char>(size >> 24)};
  if (!WriteFully(connection, frame, sizeof(frame))) return;
  WriteFully(connection, response->data(), response->size());
}

void HitSocket::Stop() {
  if (stopping_.exchange(true)) return;
  acceptor_->Stop();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  if (!path_.empty()) unlink(path_.c_str());
}

HitSocket::~HitSocket() { Stop(); }

}  // namespace jitcache
