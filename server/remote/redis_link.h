#ifndef JITCACHE_SERVER_REMOTE_REDIS_LINK_H_
#define JITCACHE_SERVER_REMOTE_REDIS_LINK_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "server/remote/redis_url.h"
#include "server/remote/tls_context.h"

struct redisReply;
struct redisReader;
typedef struct ssl_st SSL;

namespace jitcache {

struct RedisReplyDeleter {
  void operator()(redisReply* r) const;
};
// A reply as hiredis's reader makes it.
using RedisReply = std::unique_ptr<redisReply, RedisReplyDeleter>;

struct RedisLinkOptions {
  absl::Duration timeout = absl::Milliseconds(500);  // connect; each command
  // AUTH after each connect (no AUTH without a password); user empty: the
  // default user.
  std::string user;
  std::string password;
  int db = 0;  // SELECTed after each connect when not 0
  // READONLY after each connect: a Redis Cluster replica then answers
  // reads of its master's slots itself (they may lag behind the master).
  bool readonly = false;
  std::shared_ptr<const TlsContext> tls;  // null: plain TCP or Unix socket
  // The most spare room the reply buffer keeps between replies (hiredis's
  // maxbuf; its own default is 16 KiB). hiredis frees a buffer that a
  // reply leaves empty with more to spare, and every large GET then grew a
  // new one: over TLS, whose records come 16 KiB at a time, the heap
  // shrank and grew on each (about 30 page faults a GET). 4 MiB keeps what
  // entries up to about 3 MiB leave (the buffer doubles up to 1 MiB, then
  // grows by 1 MiB), at 4 MiB a link at most.
  size_t reply_buffer_kept = size_t{4} << 20;
};

// One connection to one Redis server, over TCP, TLS or a Unix socket,
// opened when first used and again after a failure: commands are written
// with hiredis's encoder and replies parsed with its reader, on a socket
// of our own (hiredis 0.14, Debian's, has no TLS). Connecting (TLS and
// login included) has the timeout in all; a command then fails when no
// byte moves for the timeout.
// Thread-safety: none; one user at a time.
class RedisLink {
 public:
  RedisLink(RedisEndpoint endpoint, RedisLinkOptions options);
  ~RedisLink();
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  // The reply to one command, an error reply included; nullptr when the
  // server cannot be reached, refuses the login, or does not answer in
  // time (`error` says why, and the link is closed).
  RedisReply Command(std::span<const std::string_view> argv,
                     std::string* error);

  const RedisEndpoint& endpoint() const { return endpoint_; }
  bool open() const { return fd_ >= 0; }
  void Close();

 private:
  bool Open(absl::Time& deadline, std::string* error);
  bool Connect(absl::Time deadline, std::string* error);
  bool Handshake(absl::Time deadline, std::string* error);
  bool Login(absl::Time& deadline, std::string* error);
  // `deadline` moves on by the timeout whenever bytes move: a large value
  // that keeps arriving is not cut off, a server that stalls is.
  RedisReply Exchange(std::span<const std::string_view> argv,
                      absl::Time& deadline, std::string* error);
  bool WriteAll(std::string_view bytes, absl::Time& deadline,
                std::string* error);
  // Some bytes into the reader; false on end of stream, error or timeout.
  bool ReadSome(absl::Time& deadline, std::string* error);
  void Progressed(absl::Time& deadline) const;
  // Waits until the socket is readable (`events` POLLIN) or writable
  // (POLLOUT), or the deadline passes.
  bool Wait(short events, absl::Time deadline, std::string* error);

  const RedisEndpoint endpoint_;
  const RedisLinkOptions options_;
  int fd_ = -1;
  SSL* ssl_ = nullptr;
  redisReader* reader_ = nullptr;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REDIS_LINK_H_
