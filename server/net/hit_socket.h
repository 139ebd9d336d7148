#ifndef JITCACHE_SERVER_NET_HIT_SOCKET_H_
#define JITCACHE_SERVER_NET_HIT_SOCKET_H_

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
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
// No peer can starve it: a connection has `io_timeout` in all to send its
// request (not per read), memory grows with the bytes that arrive (never
// from a declared length), one user holds at most kMaxPerUser connections
// at once (more are closed at once: that client asks gRPC), and the
// threads that serve grow from `threads` to kMaxThreads as connections
// wait.
// Thread-safety: Start or Adopt once, then Stop once (or destroy).
class HitSocket {
 public:
  // Serialized request -> serialized response on a hit, null otherwise
  // (shared, so that a kept answer is written without a copy).
  using Answer = std::function<std::shared_ptr<const std::string>(
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
  // Stops accepting, answers the connections already accepted (each
  // within its deadline), then returns.
  void Stop();

  static constexpr int kMaxPerUser = 8;
  static constexpr int kMaxThreads = 64;

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
  struct Connection {
    int fd;
    uid_t uid;
    PeerCredentials peer;
    absl::Time deadline;  // for the whole request
  };
  void AcceptLoop();
  void ServeLoop();
  void Handle(const Connection& connection);

  const std::string path_;  // empty: not ours to remove
  const std::unique_ptr<Acceptor> acceptor_;
  const size_t max_request_bytes_;
  const Answer answer_;
  const absl::Duration io_timeout_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_thread_;

  absl::Mutex mu_;
  std::deque<Connection> waiting_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uid_t, int> per_user_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_serving_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_HIT_SOCKET_H_
