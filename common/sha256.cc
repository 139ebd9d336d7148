#include "common/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace jitcache {
namespace {

// libcrypto without SHA-256, or no memory for a context: nothing that
// hashes can go on.
void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fatal: SHA-256 through libcrypto: %s\n", what);
  std::abort();
}

// Fetched once: an implicit fetch per EVP_DigestInit_ex costs a lookup in
// OpenSSL's provider tables every time.
const EVP_MD* Algorithm() {
  static const EVP_MD* const md = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    Require(fetched != nullptr, "no SHA256 algorithm");
    return fetched;
  }();
  return md;
}

}  // namespace

void Sha256::FreeContext::operator()(EVP_MD_CTX* context) const {
  EVP_MD_CTX_free(context);
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  Require(context_ != nullptr &&
              EVP_DigestInit_ex(context_.get(), Algorithm(), nullptr) == 1,
          "cannot start a digest");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::Update(absl::string_view data) {
  Update(data.data(), data.size());
}

void Sha256::Update(const void* data, size_t size) {
  if (size > 0) EVP_DigestUpdate(context_.get(), data, size);
}

Sha256::Digest Sha256::Finish() {
  Digest digest;
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_.get(), digest.data(), &length);
  return digest;
}

Sha256::Digest Sha256::Hash(absl::string_view data) {
  Digest digest;
  unsigned int length = 0;
  Require(EVP_Digest(data.data(), data.size(), digest.data(), &length,
                     Algorithm(), nullptr) == 1,
          "digest failed");
  return digest;
}

}  // namespace jitcache
