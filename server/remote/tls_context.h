#ifndef JITCACHE_SERVER_REMOTE_TLS_CONTEXT_H_
#define JITCACHE_SERVER_REMOTE_TLS_CONTEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace jitcache {

// How the daemon speaks TLS to the remote tier (rediss://,
// redis-cluster+tls://).
struct TlsOptions {
  std::string ca_file;    // the CA that signed the servers' certificates
  std::string cert_file;  // optional: this node's certificate (chain)
  std::string key_file;   // its private key: private to the daemon's user
  // The name every server's certificate must carry; empty: each server's
  // own host (a DNS name or an IP address, as the URL or the cluster names
  // it).
  std::string server_name;
};

// OpenSSL's client context for those options: the CA loaded, the peer's
// certificate always verified (chain and name), TLS 1.2 at least, the
// client certificate and key loaded and matched when given.
// Thread-safety: immutable after Create; NewSession from any thread.
class TlsContext {
 public:
  // FAILED_PRECONDITION naming the file and OpenSSL's reason for a CA,
  // certificate or key that cannot be used, or a key file others can read.
  static absl::StatusOr<std::shared_ptr<const TlsContext>> Create(
      const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // A client session on the connected socket `fd` to `host`, which the
  // server's certificate must name (or the server_name given); the caller
  // owns it (SSL_free). nullptr when OpenSSL cannot make one.
  SSL* NewSession(int fd, const std::string& host) const;

 private:
  TlsContext(SSL_CTX* ctx, std::string server_name)
      : ctx_(ctx), server_name_(std::move(server_name)) {}
  SSL_CTX* const ctx_;
  const std::string server_name_;
};

// OpenSSL's queued errors, oldest first, as one line (and the queue
// emptied); `fallback` when there are none.
std::string TakeOpenSslErrors(const std::string& fallback);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_TLS_CONTEXT_H_
