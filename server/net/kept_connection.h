#ifndef JITCACHE_SERVER_NET_KEPT_CONNECTION_H_
#define JITCACHE_SERVER_NET_KEPT_CONNECTION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/net/peer_listener.h"

namespace jitcache {

// Where answers given later (KeptConnection::Reply::later) arrive for the
// connections of one event loop, from any thread; the loop takes them when
// `wake` has told it to. Shared by the loop and every promise it made, so
// it outlives the loop: an answer given after Close is dropped.
// Thread-safety: all methods from any thread.
class LaterAnswers {
 public:
  struct Given {
    int fd;
    uint64_t ticket;
    std::shared_ptr<const std::string> answer;  // null: "ask gRPC"
    // `answer` is why the request was refused (a serialized FramedRefusal),
    // not the answer.
    bool refused = false;
  };
  explicit LaterAnswers(std::function<void()> wake) : wake_(std::move(wake)) {}

  void Give(Given given);
  std::vector<Given> Take();
  // No more wake-ups, and answers given from now on are dropped.
  void Close();
  uint64_t NextTicket() { return ++tickets_; }

 private:
  const std::function<void()> wake_;
  std::atomic<uint64_t> tickets_{0};
  absl::Mutex mu_;
  std::vector<Given> given_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// The promise of one connection's answer, given later: call it once, from
// any thread, at any time (after the connection or its loop is gone too:
// then nothing happens). Copyable; every copy is the same promise.
class AnswerLater {
 public:
  AnswerLater(std::shared_ptr<LaterAnswers> to, int fd, uint64_t ticket)
      : to_(std::move(to)), fd_(fd), ticket_(ticket) {}
  // `answer` null: "ask gRPC"; `refused`: `answer` is why the request was
  // refused (a serialized FramedRefusal).
  void operator()(std::shared_ptr<const std::string> answer,
                  bool refused = false) const {
    to_->Give({fd_, ticket_, std::move(answer), refused});
  }

 private:
  std::shared_ptr<LaterAnswers> to_;
  int fd_;
  uint64_t ticket_;
};

// One client's connection to the framed socket, kept for as many requests as
// the client sends on it, one after another (see framed_socket.h for the
// wire format). A non-blocking state machine: its owner waits for the
// descriptor to be readable or writable and calls On*, which never block.
// The connection buffers only bytes that have arrived (never a declared
// length), answers each whole request in turn, and reads no further while
// an answer is unsent, so a client that does not read holds one answer.
// An answer may also be promised for later (a ptxas run): the connection
// then reads nothing until it is given, however long that takes.
// Thread-safety: none; one thread (the owning loop) at a time.
class KeptConnection {
 public:
  // What a request is answered with: the serialized response now (shared,
  // so that a kept answer is written without a copy; null: "ask gRPC"), or,
  // when `later` is set, a promise: `later` is called once the Answer has
  // returned (so it must own what it uses), on the same thread, with the
  // AnswerLater to give the answer with.
  // `refused`: `now` is not the answer but why the request was refused (a
  // serialized FramedRefusal, which the caller reads instead of asking
  // gRPC, which it may not be able to).
  // `file_fd`: the answer is the whole content of this sealed memory file,
  // sent as its descriptor (SCM_RIGHTS) with an empty frame of status
  // kShared; `file` keeps it open until it is sent. `now` holds the same
  // bytes, sent instead while an earlier answer on the connection is
  // unread (so that a peer that asks and never reads holds one descriptor
  // in flight at most) or when the kernel refuses more in flight.
  struct Reply {
    std::shared_ptr<const std::string> now;
    std::function<void(AnswerLater)> later = nullptr;
    bool refused = false;
    int file_fd = -1;
    std::shared_ptr<const void> file = nullptr;
  };
  using Answer = std::function<Reply(absl::string_view request,
                                     const PeerCredentials& peer)>;
  // What every connection of one socket answers with, and its limits.
  struct Serving {
    Answer answer;
    // Requests over this are answered "ask gRPC" and end the connection.
    size_t max_request_bytes = 0;
    // A request's time from its first byte; an answer's to be read.
    absl::Duration io_timeout;
  };
  // kLater: for an answer promised for later (and for the peer to hang up:
  // the owner closes a connection whose peer did so while it waited).
  enum class Wait { kReadable, kWritable, kLater, kClose };

  // Takes ownership of `fd`, which must not block; `serving` must outlive
  // the connection. Answers promised for later arrive in `later` (null:
  // none can be, and a request that would wait is answered "ask gRPC").
  KeptConnection(int fd, const PeerCredentials& peer, const Serving& serving,
                 absl::Time now, std::shared_ptr<LaterAnswers> later = nullptr);
  ~KeptConnection();
  KeptConnection(const KeptConnection&) = delete;
  KeptConnection& operator=(const KeptConnection&) = delete;

  // Reads what has arrived and answers each whole request, using `scratch`
  // (reused between calls) for reads.
  Wait OnReadable(absl::Time now, std::string& scratch);
  // Sends more of the answer under way; once it is sent, answers the
  // requests that arrived behind it.
  Wait OnWritable(absl::Time now);
  // The answer promised under `ticket`: sent, then the requests that
  // arrived behind it are answered. One for a promise this connection no
  // longer waits on is ignored.
  Wait OnLaterAnswer(uint64_t ticket, std::shared_ptr<const std::string> answer,
                     absl::Time now, bool refused = false);

  int fd() const { return fd_; }
  const PeerCredentials& peer() const { return peer_; }
  // Part of a request has arrived, and not yet the rest.
  bool HasPartialRequest() const { return !in_.empty(); }
  // Nothing under way: no partial request, no unsent or promised answer.
  bool Idle() const { return in_.empty() && !Sending() && !Waiting(); }
  // An answer was promised for later and is not given yet.
  bool Waiting() const { return awaited_.has_value(); }
  // When the request or answer under way must be done (a peer that sends
  // or reads too slowly is dropped then); meaningless while Idle, and never
  // while Waiting (the promise's maker bounds its own work).
  absl::Time deadline() const { return deadline_; }
  absl::Time last_active() const { return last_active_; }

 private:
  // Answers the whole requests at the front of `bytes`; returns how many
  // bytes it used, and stops early when an answer could not be sent whole.
  size_t AnswerWhole(absl::string_view bytes, absl::Time now, bool* close);
  bool Sending() const { return head_bytes_ != 0; }
  void StartAnswer(std::shared_ptr<const std::string> response, absl::Time now,
                   bool refused = false);
  // An answer that is the content of a sealed file, sent as its descriptor.
  void StartFileAnswer(int file_fd, std::shared_ptr<const void> file,
                       std::shared_ptr<const std::string> bytes,
                       absl::Time now);
  // Whether the peer has yet to read an earlier answer (or the kernel
  // will not say).
  bool Unread() const;
  // Sends what the socket takes of the answer; false when the peer has
  // gone.
  bool Flush();
  // What to wait for once the answer under way, if any, was flushed.
  Wait Next() const;
  // Answers the requests that arrived behind the one just answered.
  Wait AnswerWaiting(absl::Time now);

  const int fd_;
  const PeerCredentials peer_;
  const Serving& serving_;
  const std::shared_ptr<LaterAnswers> later_;
  std::optional<uint64_t> awaited_;  // the ticket of a promised answer
  std::string in_;  // the start of a request, while the rest is awaited
  std::shared_ptr<const std::string> out_;  // an answer being sent
  // A descriptor to send with the head's first byte, and what keeps it open.
  int out_fd_ = -1;
  std::shared_ptr<const void> out_file_;
  std::shared_ptr<const std::string> out_bytes_;  // the file's content
  char head_[5] = {0};        // its status byte, then its length if a hit
  size_t head_bytes_ = 0;     // of head_ in use; 0: no answer under way
  size_t sent_ = 0;           // of head_ then *out_
  bool close_after_ = false;  // once the answer under way is sent
  absl::Time deadline_ = absl::InfiniteFuture();
  absl::Time last_active_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_KEPT_CONNECTION_H_
