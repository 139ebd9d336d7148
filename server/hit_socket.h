#ifndef JITCACHE_SERVER_HIT_SOCKET_H_
#define JITCACHE_SERVER_HIT_SOCKET_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

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
// callback). A peer that stalls is dropped after `io_timeout`.
// Thread-safety: Start once, then Stop once (or destroy).
class HitSocket {
 public:
  // Serialized request -> serialized response on a hit, nullopt otherwise.
  using Answer =
      std::function<std::optional<std::string>(const std::string& request)>;

  static absl::StatusOr<std::unique_ptr<HitSocket>> Start(
      const std::string& path, size_t max_request_bytes, Answer answer,
      int threads = 4, absl::Duration io_timeout = absl::Seconds(2));
  ~HitSocket();
  void Stop();

 private:
  HitSocket(std::string path, int fd, size_t max_request_bytes, Answer answer,
            absl::Duration io_timeout)
      : path_(std::move(path)),
        fd_(fd),
        max_request_bytes_(max_request_bytes),
        answer_(std::move(answer)),
        io_timeout_(io_timeout) {}
  void Serve();
  void Handle(int connection);

  const std::string path_;
  const int fd_;
  const size_t max_request_bytes_;
  const Answer answer_;
  const absl::Duration io_timeout_;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_HIT_SOCKET_H_
