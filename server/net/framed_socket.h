#ifndef JITCACHE_SERVER_NET_FRAMED_SOCKET_H_
#define JITCACHE_SERVER_NET_FRAMED_SOCKET_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/net/acceptor.h"
#include "server/net/kept_connection.h"
#include "server/net/peer_listener.h"
#include "server/net/unix_listen.h"

namespace jitcache {

// A second Unix socket, next to the gRPC one, without gRPC's per-call cost.
// libjitcache and the `jitcache` command ask it for hits only, and ask a
// miss over gRPC: one keeps a connection and asks on it again and again,
// the other would spend milliseconds loading gRPC to ask one question. The
// front ends that load no gRPC (libnvrtc.so.13, jitcache-ptxas,
// libnvJitLink.so.13, libnvvm.so.4) ask their whole request here: a miss
// joins the engine's run for its key, as a gRPC one does, and its answer
// is promised (KeptConnection::Reply::later) and sent when that run is
// done, while the loop serves its other connections. Any number of
// requests per connection, one after another, little-endian framing:
//   request:  u32 length | payload (see common/framed_protocol.h)
//   response: u8 0 | u32 length | answer   (a hit, or a run's answer)
//          or u8 2 | u32 length | refusal  (refused: a FramedRefusal, the
//                                           status code and message the
//                                           gRPC path would give)
//          or u8 3 | u32 0, a descriptor   (a large hit as a sealed memory
//                                           file: kCompileShared,
//                                           kHitShared)
//          or u8 1                         (not answered here: a hit-only
//                                           ask's miss, or a request this
//                                           socket does not take; the
//                                           caller asks gRPC or does the
//                                           work itself)
// Validation, limits and the key are the gRPC path's own (the `answer`
// callback), and so is the peer's identity: the kernel's SO_PEERCRED.
//
// Connections are served by a few event loops (epoll), each answering its
// connections' requests itself: a hit costs one wake-up of one thread, and
// an idle kept connection costs a descriptor, not a thread. No peer can
// starve it: a request has `io_timeout` in all from its first byte (not
// per read) and its answer as long to be read; memory grows with the bytes
// that arrive, never from a declared length; one user holds at most
// kMaxPerUser connections and kMaxPartialPerUser half-sent requests (past
// those, connections are closed: that client asks gRPC or does the work
// itself); connections idle for `idle_timeout` are closed (clients connect
// again). A connection waiting for a promised answer has no deadline here
// (the service bounds its runs), is closed when its peer hangs up, and is
// closed at Stop (its peer then does the work itself).
// Thread-safety: Start or Adopt once, then Stop once (or destroy).
class FramedSocket {
 public:
  using Answer = KeptConnection::Answer;
  struct Options {
    size_t max_request_bytes = 64 << 20;
    int loops = 0;  // 0: one per core, at most kMaxLoops
    absl::Duration io_timeout = absl::Seconds(2);
    absl::Duration idle_timeout = absl::Seconds(60);
  };

  // Binds `path` with its final `access` (the caller owns the path: see
  // SocketGuard) and removes it on Stop.
  static absl::StatusOr<std::unique_ptr<FramedSocket>> Start(
      const std::string& path, const SocketAccess& access, Answer answer,
      const Options& options);
  // Serves a listening socket a service manager passed; Stop closes this
  // process's descriptor only, leaving the socket to its owner.
  static absl::StatusOr<std::unique_ptr<FramedSocket>> Adopt(
      int listen_fd, Answer answer, const Options& options);
  ~FramedSocket();
  // Stops accepting, closes idle connections, answers the requests under
  // way (each within its deadline), then returns.
  void Stop();
  // Connections taken so far (refused ones included).
  uint64_t accepted() const { return accepted_.load(); }

  // Each of a user's waiting ptxas runs holds one: a herd of 8 ranks with
  // 16 compile processes each fits.
  static constexpr int kMaxPerUser = 256;
  static constexpr int kMaxPartialPerUser = 8;
  static constexpr int kMaxConnections = 1024;
  static constexpr int kMaxLoops = 16;

 private:
  struct Loop;
  class LoopRun;
  FramedSocket(std::string path, std::unique_ptr<Acceptor> acceptor,
               Answer answer, const Options& options);
  static absl::StatusOr<std::unique_ptr<FramedSocket>> Serve(
      std::string path, int listen_fd, Answer answer, const Options& options);
  void AcceptLoop();
  void RunLoop(Loop& loop);
  // Counts `connection`'s user as having one more (or one fewer) request
  // half sent; false when that is one too many.
  bool CountPartial(const KeptConnection& connection, int delta);
  void Forget(const KeptConnection& connection);

  const std::string path_;  // empty: not ours to remove
  const std::unique_ptr<Acceptor> acceptor_;
  const Options options_;
  // What each connection answers with, and its limits (options_'s).
  const KeptConnection::Serving serving_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> accepted_{0};
  std::thread acceptor_thread_;
  std::vector<std::unique_ptr<Loop>> loops_;

  struct UserCounts {
    int connections = 0;
    int partial = 0;
  };
  absl::Mutex users_mu_;
  absl::flat_hash_map<uid_t, UserCounts> users_ ABSL_GUARDED_BY(users_mu_);
  int connections_ ABSL_GUARDED_BY(users_mu_) = 0;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_FRAMED_SOCKET_H_
