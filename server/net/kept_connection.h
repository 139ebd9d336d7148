#ifndef JITCACHE_SERVER_NET_KEPT_CONNECTION_H_
#define JITCACHE_SERVER_NET_KEPT_CONNECTION_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/net/peer_listener.h"

namespace jitcache {

// One client's connection to the hit socket, kept for as many requests as
// the client sends on it, one after another (see hit_socket.h for the
// wire format). A non-blocking state machine: its owner waits for the
// descriptor to be readable or writable and calls On*, which never block.
// The connection buffers only bytes that have arrived (never a declared
// length), answers each whole request in turn, and reads no further while
// an answer is unsent, so a client that does not read holds one answer.
// Thread-safety: none; one thread (the owning loop) at a time.
class KeptConnection {
 public:
  // Serialized request -> serialized response on a hit, null otherwise
  // (shared, so that a kept answer is written without a copy).
  using Answer = std::function<std::shared_ptr<const std::string>(
      absl::string_view request, const PeerCredentials& peer)>;
  // What every connection of one socket answers with, and its limits.
  struct Serving {
    Answer answer;
    // Requests over this are answered "ask gRPC" and end the connection.
    size_t max_request_bytes = 0;
    // A request's time from its first byte; an answer's to be read.
    absl::Duration io_timeout;
  };
  enum class Wait { kReadable, kWritable, kClose };

  // Takes ownership of `fd`, which must not block; `serving` must outlive
  // the connection.
  KeptConnection(int fd, const PeerCredentials& peer, const Serving& serving,
                 absl::Time now);
  ~KeptConnection();
  KeptConnection(const KeptConnection&) = delete;
  KeptConnection& operator=(const KeptConnection&) = delete;

  // Reads what has arrived and answers each whole request, using `scratch`
  // (reused between calls) for reads.
  Wait OnReadable(absl::Time now, std::string& scratch);
  // Sends more of the answer under way; once it is sent, answers the
  // requests that arrived behind it.
  Wait OnWritable(absl::Time now);

  int fd() const { return fd_; }
  const PeerCredentials& peer() const { return peer_; }
  // Part of a request has arrived, and not yet the rest.
  bool HasPartialRequest() const { return !in_.empty(); }
  // Nothing under way: no partial request, no unsent answer.
  bool Idle() const { return in_.empty() && !Sending(); }
  // When the request or answer under way must be done (a peer that sends
  // or reads too slowly is dropped then); meaningless while Idle.
  absl::Time deadline() const { return deadline_; }
  absl::Time last_active() const { return last_active_; }

 private:
  // Answers the whole requests at the front of `bytes`; returns how many
  // bytes it used, and stops early when an answer could not be sent whole.
  size_t AnswerWhole(absl::string_view bytes, absl::Time now, bool* close);
  bool Sending() const { return head_bytes_ != 0; }
  void StartAnswer(std::shared_ptr<const std::string> response, absl::Time now);
  // Sends what the socket takes of the answer; false when the peer has
  // gone.
  bool Flush();
  // What to wait for once the answer under way, if any, was flushed.
  Wait Next() const;

  const int fd_;
  const PeerCredentials peer_;
  const Serving& serving_;
  std::string in_;  // the start of a request, while the rest is awaited
  std::shared_ptr<const std::string> out_;  // an answer being sent
  char head_[5] = {0};        // its status byte, then its length if a hit
  size_t head_bytes_ = 0;     // of head_ in use; 0: no answer under way
  size_t sent_ = 0;           // of head_ then *out_
  bool close_after_ = false;  // once the answer under way is sent
  absl::Time deadline_ = absl::InfiniteFuture();
  absl::Time last_active_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_KEPT_CONNECTION_H_
