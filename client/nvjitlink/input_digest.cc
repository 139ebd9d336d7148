#include "client/nvjitlink/input_digest.h"

#include <dlfcn.h>

namespace jitcache {
namespace {

// OpenSSL's one-call digest (EVP_Digest, EVP_sha256), as libcrypto.so.3
// exports them; the types are opaque here.
struct Crypto {
  const void* (*sha256)() = nullptr;
  int (*digest)(const void* data, size_t count, unsigned char* md,
                unsigned int* size, const void* type, void* engine) = nullptr;
};

const Crypto& Libcrypto() {
  static const Crypto crypto = [] {
    Crypto c;
    void* lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return c;
    c.sha256 = reinterpret_cast<decltype(c.sha256)>(dlsym(lib, "EVP_sha256"));
    c.digest = reinterpret_cast<decltype(c.digest)>(dlsym(lib, "EVP_Digest"));
    return c;
  }();
  return crypto;
}

}  // namespace

std::optional<std::string> HexSha256(std::string_view bytes) {
  const Crypto& c = Libcrypto();
  if (c.sha256 == nullptr || c.digest == nullptr) return std::nullopt;
  unsigned char md[32];
  unsigned int size = 0;
  if (c.digest(bytes.data(), bytes.size(), md, &size, c.sha256(), nullptr) !=
          1 ||
      size != sizeof(md)) {
    return std::nullopt;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof(md));
  for (unsigned char b : md) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

}  // namespace jitcache
