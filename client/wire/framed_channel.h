#ifndef JITCACHE_CLIENT_WIRE_FRAMED_CHANNEL_H_
#define JITCACHE_CLIENT_WIRE_FRAMED_CHANNEL_H_

// The asking side of the daemon's framed socket (server/net/framed_socket.h,
// common/framed_protocol.h), shared by libjitcache and the `jitcache` front
// end: plain POSIX and the standard library, nothing else, so the front end
// loads no more.
#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

// An answer the daemon handed over as a sealed memory file (a large hit
// asked with kCompileShared), mapped read-only: its bytes stay valid, and
// the same, for as long as this lives, whatever any other process does
// with its own descriptor (the file is sealed against writing, shrinking
// and growing before it leaves the daemon, and this mapping checks so).
class MappedAnswer {
 public:
  MappedAnswer() = default;
  // `populate`: map every page at once, for a caller that reads them all
  // right away (libnvrtc.so.13 copies them out); without it a page is
  // mapped when first read (libjitcache hands them to the driver, which
  // may read them much later, or never).
  explicit MappedAnswer(bool populate) : populate_(populate) {}
  ~MappedAnswer();
  MappedAnswer(MappedAnswer&& other) noexcept;
  MappedAnswer& operator=(MappedAnswer&& other) noexcept;
  MappedAnswer(const MappedAnswer&) = delete;
  MappedAnswer& operator=(const MappedAnswer&) = delete;

  // Maps the file behind `fd` (which it closes); empty when the file is
  // not sealed so, or cannot be mapped.
  static MappedAnswer Of(int fd, bool populate = true);
  bool populate() const { return populate_; }

  bool empty() const { return data_ == nullptr; }
  std::string_view bytes() const {
    return {static_cast<const char*>(data_), size_};
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  bool populate_ = true;
};

// A process's connections to the framed socket next to the gRPC socket
// `socket`, kept between requests: a hit then costs one write and one read,
// not a connect, an accept and a close.
// An ask on a kept connection polls for its answer for a moment before it
// sleeps (JITCACHE_HIT_SPIN_US, 50 by default): on a quiet machine a
// sleeping thread's wake-up costs more than the daemon takes to answer.
// Thread-safety: Ask from any number of threads; each ask uses a connection
// no other thread is using (a kept one, else a new one). Safe across
// fork(): a child never uses its parent's connections.
class FramedChannel {
 public:
  // Why the daemon refused a request (FramedRefusal): a google.rpc.Code
  // number (as absl::StatusCode's) and the message the gRPC path gives.
  struct Refusal {
    int code = 0;  // 0: not refused
    std::string message;
  };

  explicit FramedChannel(std::string socket);
  ~FramedChannel();
  FramedChannel(const FramedChannel&) = delete;
  FramedChannel& operator=(const FramedChannel&) = delete;

  // The daemon's answer to `payload` when it is a hit (or the toolkit, or
  // a run's answer), read into `buffer` (reused: it never shrinks, so a
  // warm buffer costs no allocation) and viewed there (not necessarily at
  // its start); nullopt for anything else (a miss, a refusal, no framed
  // socket, a daemon that does not answer within `timeout`), which the
  // caller then asks over gRPC or does itself. A refusal's code and
  // message go to `refused` when given (its code stays 0 otherwise). A
  // kept connection the daemon has closed meanwhile (idle, restarted) is
  // replaced once, unseen.
  // With `mapped` given (a kCompileShared or kHitShared request), an answer
  // the daemon hands over as a sealed file is mapped there (populated as
  // `mapped` says) and viewed in it.
  std::optional<std::string_view> Ask(
      std::string_view payload, std::string& buffer,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(500),
      Refusal* refused = nullptr, MappedAnswer* mapped = nullptr);

 private:
  int Take();
  void Keep(int fd);

  const std::string path_;
  const std::chrono::steady_clock::duration spin_;
  std::mutex mu_;
  std::vector<int> idle_;  // guarded by mu_
  pid_t pid_;              // guarded by mu_: whose connections idle_ holds
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_WIRE_FRAMED_CHANNEL_H_
