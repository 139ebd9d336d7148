#ifndef JITCACHE_SERVER_NET_HIT_SOCKET_H_
#define JITCACHE_SERVER_NET_HIT_SOCKET_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/net/acceptor.h"
#include "server/net/peer_listener.h"

namespace jitcache {

// A second Unix socket, next to the gRPC one, that answers only cache hits,
// for short-lived processes (the `jitcache` command) that would otherwise
// spend milliseconds loading gRPC to ask one question. One request per
// connection, little-endian framing:
//   request:  u32 length | CompileRequest (protobuf)
//   response: u8 0 | u32 length | CompileResponse   (a hit)
//          or u8 1                                  (anything else: ask the
//                                                    gRPC socket, which says
//                                                    why)
// Validation, limits and the key are the gRPC path's own (the `answer`
// callback), and so is the peer's identity: the kernel's SO_PEERCRED.
// A peer that stalls is dropped after `io_timeout`.
// Thread-safety: Start or Adopt once, then Stop once (or destroy).
class HitSocket {
 public:
  // Serialized request -> serialized response on a hit, nullopt otherwise.
  using Answer = std::function<std::optional<std::string>(
      const std::string& request, const PeerCredentials& peer)>;

  // Binds `path` (the caller owns it: see SocketGuard) and removes it on Stop.
  static absl::StatusOr<std::unique_ptr<HitSocket>> Start(
      const std::string& path, size_t max_request_bytes, Answer answer,
      int threads = 4, absl::Duration io_timeout = absl::Seconds(2));
  // Serves a listening socket a service manager passed; Stop closes this
  // process's descriptor only, leaving the socket to its owner.
  static absl::StatusOr<std::unique_ptr<HitSocket>> Adopt(
      int listen_fd, size_t max_request_bytes, Answer answer, int threads = 4,
      absl::Duration io_timeout = absl::Seconds(2));
  ~HitSocket();
  void Stop();

 private:
  HitSocket(std::string path, std::unique_ptr<Acceptor> acceptor,
            size_t max_request_bytes, Answer answer, absl::Duration io_timeout)
      : path_(std::move(path)),
        acceptor_(std::move(acceptor)),
        max_request_bytes_(max_request_bytes),
        answer_(std::move(answer)),
        io_timeout_(io_timeout) {}
  static absl::StatusOr<std::unique_ptr<HitSocket>> Serve(
      std::string path, int listen_fd, size_t max_request_bytes, Answer answer,
      int threads, absl::Duration io_timeout);
  void AcceptLoop();
  void Handle(int connection);

  const std::string path_;  // empty: not ours to remove
  const std::unique_ptr<Acceptor> acceptor_;
  const size_t max_request_bytes_;
  const Answer answer_;
  const absl::Duration io_timeout_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_HIT_SOCKET_H_
