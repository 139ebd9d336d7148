#include "common/hex_sha256.h"

#include "common/sha256.h"

namespace jitcache {
namespace {

std::string Hex(const Sha256::Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (uint8_t b : digest) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

}  // namespace

std::string HexSha256(std::string_view bytes) {
  return Hex(Sha256::Hash(bytes));
}

std::string HexSha256ForTest(std::string_view bytes, bool cpu_instructions) {
  return Hex(Sha256::HashForTest(bytes, cpu_instructions));
}

}  // namespace jitcache
