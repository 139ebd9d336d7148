#ifndef JITCACHE_COMMON_SHA256_H_
#define JITCACHE_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/strings/string_view.h"

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace jitcache {

// SHA-256 through OpenSSL's EVP interface (libcrypto is loaded by every
// binary that hashes: gRPC needs it), which picks the CPU's fastest code.
// Not thread-safe: one hasher per thread.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void Update(absl::string_view data);
  void Update(const void* data, size_t size);
  // Ends the message; the hasher must not be used afterwards.
  Digest Finish();

  static Digest Hash(absl::string_view data);

 private:
  struct FreeContext {
    void operator()(EVP_MD_CTX* context) const;
  };
  std::unique_ptr<EVP_MD_CTX, FreeContext> context_;
};

}  // namespace jitcache

#endif  // JITCACHE_COMMON_SHA256_H_
