#include "server/remote/tls_context.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "absl/strings/str_cat.h"
#include "server/remote/remote_keys.h"

namespace jitcache {

std::string TakeOpenSslErrors(const std::string& fallback) {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    absl::StrAppend(&out, out.empty() ? "" : "; ", text);
  }
  return out.empty() ? fallback : out;
}

absl::StatusOr<std::shared_ptr<const TlsContext>> TlsContext::Create(
    const TlsOptions& options) {
  if (options.ca_file.empty()) {
    return absl::FailedPreconditionError(
        "TLS to the remote tier needs --remote_tls_ca_file: the CA that "
        "signed the servers' certificates");
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::FailedPreconditionError(
        "--remote_tls_cert_file and --remote_tls_key_file go together");
  }
  if (!options.key_file.empty()) {
    if (absl::Status s =
            CheckPrivateFile("remote_tls_key_file", options.key_file);
        !s.ok()) {
      return s;
    }
  }
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    return absl::InternalError(TakeOpenSslErrors("SSL_CTX_new failed"));
  }
  auto fail = [ctx](const std::string& flag, const std::string& path) {
    SSL_CTX_free(ctx);
    return absl::FailedPreconditionError(absl::StrCat(
        "--", flag, "=", path, ": ", TakeOpenSslErrors("cannot be used")));
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Whole socket reads rather than a record header and its body apart:
  // half the reads for a large value.
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) !=
      1) {
    return fail("remote_tls_ca_file", options.ca_file);
  }
  if (!options.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, options.cert_file.c_str()) !=
        1) {
      return fail("remote_tls_cert_file", options.cert_file);
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, options.key_file.c_str(),
                                    SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      return fail("remote_tls_key_file", options.key_file);
    }
  }
  return std::shared_ptr<const TlsContext>(
      new TlsContext(ctx, options.server_name));
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

SSL* TlsContext::NewSession(int fd, const std::string& host) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  const std::string& name = server_name_.empty() ? host : server_name_;
  in6_addr address;
  const bool is_address = inet_pton(AF_INET, name.c_str(), &address) == 1 ||
                          inet_pton(AF_INET6, name.c_str(), &address) == 1;
  bool ok = SSL_set_fd(ssl, fd) == 1;
  if (is_address) {
    // An address is checked against the certificate's IP addresses; it is
    // no server name to send.
    ok = ok &&
         X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str()) == 1;
  } else {
    // The name must be one of the certificate's DNS names (never its
    // subject's common name, which clients no longer trust).
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
    ok = ok && SSL_set_tlsext_host_name(ssl, name.c_str()) == 1 &&
         SSL_set1_host(ssl, name.c_str()) == 1;
  }
  if (!ok) {
    SSL_free(ssl);
    return nullptr;
  }
  return ssl;
}

}  // namespace jitcache
