#include "server/remote/redis_link.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace jitcache {
namespace {

int MillisLeft(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
}

}  // namespace

void RedisReplyDeleter::operator()(redisReply* r) const {
  if (r != nullptr) freeReplyObject(r);
}

RedisLink::RedisLink(RedisEndpoint endpoint, RedisLinkOptions options)
    : endpoint_(std::move(endpoint)), options_(std::move(options)) {}

RedisLink::~RedisLink() { Close(); }

void RedisLink::Close() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  ssl_ = nullptr;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = nullptr;
}

RedisReply RedisLink::Command(std::span<const std::string_view> argv,
                              std::string* error) {
  absl::Time deadline = absl::Now() + options_.timeout;
  if (fd_ < 0 && !Open(deadline, error)) {
    Close();
    return nullptr;
  }
  deadline = absl::Now() + options_.timeout;
  RedisReply reply = Exchange(argv, deadline, error);
  if (reply == nullptr) Close();
  return reply;
}

bool RedisLink::Open(absl::Time& deadline, std::string* error) {
  reader_ = redisReaderCreate();
  if (reader_ == nullptr) {
    *error = "out of memory";
    return false;
  }
  reader_->maxbuf = options_.reply_buffer_kept;  // see RedisLinkOptions
  return Connect(deadline, error) &&
         (options_.tls == nullptr || Handshake(deadline, error)) &&
         Login(deadline, error);
}

bool RedisLink::Connect(absl::Time deadline, std::string* error) {
  if (!endpoint_.unix_path.empty()) {
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (endpoint_.unix_path.size() >= sizeof(addr.sun_path)) {
      *error = absl::StrCat(endpoint_.unix_path, ": path too long");
      return false;
    }
    std::memcpy(addr.sun_path, endpoint_.unix_path.c_str(),
                endpoint_.unix_path.size() + 1);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0 ||
        (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
         errno != EINPROGRESS)) {
      *error = absl::StrCat("connect to ", endpoint_.unix_path, ": ",
                            std::strerror(errno));
      return false;
    }
    return Wait(POLLOUT, deadline, error);
  }
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(endpoint_.port);
  if (const int r =
          getaddrinfo(endpoint_.host.c_str(), port.c_str(), &hints, &found);
      r != 0) {
    *error = absl::StrCat(endpoint_.Name(), ": ", gai_strerror(r));
    return false;
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd_ = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 a->ai_protocol);
    if (fd_ < 0) continue;
    if (connect(fd_, a->ai_addr, a->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && Wait(POLLOUT, deadline, &why))) {
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      getsockopt(fd_, SOL_SOCKET, SO_ERROR, &so_error, &len);
      if (so_error == 0) {
        const int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        freeaddrinfo(found);
        return true;
      }
      why = std::strerror(so_error);
    } else if (errno != EINPROGRESS) {
      why = std::strerror(errno);
    }
    close(fd_);
    fd_ = -1;
  }
  freeaddrinfo(found);
  *error = absl::StrCat("connect to ", endpoint_.Name(), ": ", why);
  return false;
}

bool RedisLink::Handshake(absl::Time deadline, std::string* error) {
  ERR_clear_error();
  ssl_ = options_.tls->NewSession(fd_, endpoint_.host);
  if (ssl_ == nullptr) {
    *error = TakeOpenSslErrors("cannot start a TLS session");
    return false;
  }
  while (true) {
    ERR_clear_error();  // SSL_get_error reads this thread's queue
    const int r = SSL_connect(ssl_);
    if (r == 1) return true;
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      if (!Wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, error)) {
        *error =
            absl::StrCat("TLS handshake with ", endpoint_.Name(), ": ", *error);
        return false;
      }
      continue;
    }
    const long verified = SSL_get_verify_result(ssl_);
    *error = absl::StrCat(
        "TLS handshake with ", endpoint_.Name(), " refused: ",
        verified != X509_V_OK
            ? absl::StrCat("the server's certificate does not verify (",
                           X509_verify_cert_error_string(verified), ")")
            : TakeOpenSslErrors("the connection was closed"));
    ERR_clear_error();
    return false;
  }
}

bool RedisLink::Login(absl::Time& deadline, std::string* error) {
  if (!options_.password.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!options_.user.empty()) auth.push_back(options_.user);
    auth.push_back(options_.password);
    RedisReply r = Exchange(auth, deadline, error);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      if (r != nullptr) *error = absl::StrCat("AUTH: ", r->str);
      return false;
    }
  }
  if (options_.db != 0) {
    const std::string db = std::to_string(options_.db);
    const std::string_view select[] = {"SELECT", db};
    RedisReply r = Exchange(select, deadline, error);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      if (r != nullptr) *error = absl::StrCat("SELECT: ", r->str);
      return false;
    }
  }
  if (options_.readonly) {
    const std::string_view readonly[] = {"READONLY"};
    RedisReply r = Exchange(readonly, deadline, error);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      if (r != nullptr) *error = absl::StrCat("READONLY: ", r->str);
      return false;
    }
  }
  return true;
}

RedisReply RedisLink::Exchange(std::span<const std::string_view> argv,
                               absl::Time& deadline, std::string* error) {
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (std::string_view a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  char* command = nullptr;
  const int n = redisFormatCommandArgv(&command, static_cast<int>(args.size()),
                                       args.data(), lengths.data());
  if (n < 0) {
    *error = "out of memory";
    return nullptr;
  }
  const bool written = WriteAll(
      std::string_view(command, static_cast<size_t>(n)), deadline, error);
  redisFreeCommand(command);
  if (!written) return nullptr;
  while (true) {
    void* reply = nullptr;
    if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
      *error = absl::StrCat(endpoint_.Name(), ": not a Redis reply (",
                            reader_->errstr, ")");
      return nullptr;
    }
    if (reply != nullptr) return RedisReply(static_cast<redisReply*>(reply));
    if (!ReadSome(deadline, error)) return nullptr;
  }
}

void RedisLink::Progressed(absl::Time& deadline) const {
  deadline = std::max(deadline, absl::Now() + options_.timeout);
}

bool RedisLink::WriteAll(std::string_view bytes, absl::Time& deadline,
                         std::string* error) {
  while (!bytes.empty()) {
    ssize_t n;
    if (ssl_ != nullptr) {
      ERR_clear_error();  // SSL_get_error reads this thread's queue
      const int r =
          SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
      if (r <= 0) {
        const int e = SSL_get_error(ssl_, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
          *error = absl::StrCat(endpoint_.Name(), ": ",
                                TakeOpenSslErrors("TLS write failed"));
          return false;
        }
        if (!Wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline,
                  error)) {
          return false;
        }
        continue;
      }
      n = r;
    } else {
      n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) {
          *error = absl::StrCat(endpoint_.Name(), ": ", std::strerror(errno));
          return false;
        }
        if (!Wait(POLLOUT, deadline, error)) return false;
        continue;
      }
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    Progressed(deadline);
  }
  return true;
}

bool RedisLink::ReadSome(absl::Time& deadline, std::string* error) {
  char buffer[64 << 10];
  while (true) {
    ssize_t n;
    if (ssl_ != nullptr) {
      ERR_clear_error();  // SSL_get_error reads this thread's queue
      const int r = SSL_read(ssl_, buffer, sizeof(buffer));
      if (r <= 0) {
        const int e = SSL_get_error(ssl_, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
          if (!Wait(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline,
                    error)) {
            return false;
          }
          continue;
        }
        *error = absl::StrCat(endpoint_.Name(), ": ",
                              e == SSL_ERROR_ZERO_RETURN
                                  ? std::string("closed the connection")
                                  : TakeOpenSslErrors("TLS read failed"));
        return false;
      }
      n = r;
    } else {
      n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        if (!Wait(POLLIN, deadline, error)) return false;
        continue;
      }
      if (n <= 0) {
        *error = absl::StrCat(
            endpoint_.Name(), ": ",
            n == 0 ? "closed the connection" : std::strerror(errno));
        return false;
      }
    }
    if (redisReaderFeed(reader_, buffer, static_cast<size_t>(n)) != REDIS_OK) {
      *error = "out of memory";
      return false;
    }
    Progressed(deadline);
    return true;
  }
}

bool RedisLink::Wait(short events, absl::Time deadline, std::string* error) {
  while (true) {
    pollfd p = {fd_, events, 0};
    const int r = poll(&p, 1, MillisLeft(deadline));
    if (r > 0) return true;
    if (r < 0 && errno == EINTR) continue;
    *error = r == 0 ? absl::StrCat(endpoint_.Name(), ": no answer within ",
                                   absl::FormatDuration(options_.timeout))
                    : std::strerror(errno);
    return false;
  }
}

}  // namespace jitcache
