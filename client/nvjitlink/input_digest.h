#ifndef JITCACHE_CLIENT_NVJITLINK_INPUT_DIGEST_H_
#define JITCACHE_CLIENT_NVJITLINK_INPUT_DIGEST_H_

#include <optional>
#include <string>
#include <string_view>

namespace jitcache {

// The lower-case hex SHA-256 of `bytes` (a link input's digest, as the
// daemon names objects), through libcrypto.so.3 opened on first use: a
// process that links nothing never loads it, and one that does pays about
// 1 ms once. nullopt when libcrypto cannot be had. Thread-safe.
std::optional<std::string> HexSha256(std::string_view bytes);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_NVJITLINK_INPUT_DIGEST_H_
