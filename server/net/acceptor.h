#ifndef JITCACHE_SERVER_NET_ACCEPTOR_H_
#define JITCACHE_SERVER_NET_ACCEPTOR_H_

#include <memory>

#include "absl/status/statusor.h"

namespace jitcache {

// Takes the connections of a listening socket until Stop. Stop wakes every
// waiting Accept through a pipe, never by shutting the listening socket
// down: a socket a service manager passed must keep listening for the next
// daemon. The listening socket does not block, so when several threads
// wake for one connection the others go back to waiting.
// Thread-safety: Accept from any number of threads; Stop from any thread;
// destroy only after every Accept has returned.
class Acceptor {
 public:
  // Takes ownership of `listen_fd` (this process's descriptor).
  static absl::StatusOr<std::unique_ptr<Acceptor>> Create(int listen_fd);
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // The next connection (accept4 with `flags`), or -1 once Stop was called.
  int Accept(int flags);
  // Idempotent.
  void Stop();

 private:
  Acceptor(int listen_fd, int wake_read, int wake_write)
      : listen_fd_(listen_fd), wake_read_(wake_read), wake_write_(wake_write) {}

  const int listen_fd_;
  const int wake_read_, wake_write_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_NET_ACCEPTOR_H_
