#include "common/sha256.h"

// The one-call digests of OpenSSL 3 (EVP) would set up its provider
// library context in the host process: read openssl.cnf, load providers,
// register exit handlers. Its SHA256_* functions compute the digest and
// nothing else, by the same code; OpenSSL 3 marks them deprecated, not
// removed.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace jitcache {
namespace {

static_assert(sizeof(SHA256_CTX) <= 112 && alignof(SHA256_CTX) <= 8);

SHA256_CTX* Context(unsigned char* bytes) {
  return reinterpret_cast<SHA256_CTX*>(bytes);
}

}  // namespace

Sha256::Sha256() : context_{} { SHA256_Init(Context(context_)); }

void Sha256::Update(std::string_view data) { Update(data.data(), data.size()); }

void Sha256::Update(const void* data, size_t size) {
  SHA256_Update(Context(context_), data, size);
}

Sha256::Digest Sha256::Finish() {
  Digest digest;
  SHA256_Final(digest.data(), Context(context_));
  return digest;
}

Sha256::Digest Sha256::Hash(std::string_view data) {
  Sha256 hasher;
  hasher.Update(data);
  return hasher.Finish();
}

}  // namespace jitcache
