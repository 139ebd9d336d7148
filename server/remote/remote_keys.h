#ifndef JITCACHE_SERVER_REMOTE_REMOTE_KEYS_H_
#define JITCACHE_SERVER_REMOTE_REMOTE_KEYS_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jitcache {

// The team keys that sign what daemons write to the remote tier. The file
// holds one key a line, as hex (at least 32 bytes), '#' comments allowed;
// the first key signs, every key verifies (a new key goes first, the old one
// stays below it until every node has the new file). The file must be the
// daemon user's own and readable by nobody else: a key that others can read
// lets them sign.
absl::StatusOr<std::vector<std::string>> LoadRemoteKeys(
    const std::string& path);

// The remote tier's Redis login (remote_credentials_file): an ACL user
// (empty: the default user) and its password.
struct RedisCredentials {
  std::string user;
  std::string password;
};
// One line, "PASSWORD" or "USER PASSWORD", in a file private to this user
// (a password on the command line would be in every process listing).
absl::StatusOr<RedisCredentials> LoadRedisCredentials(const std::string& path);

// OK when the file at `path` is this user's and readable by no one else (it
// holds a secret); FAILED_PRECONDITION naming `--flag=path` otherwise.
absl::Status CheckPrivateFile(absl::string_view flag, const std::string& path);

// HMAC-SHA-256 under `key` of the concatenation of `parts`, each preceded
// by its length (so that no two lists of parts give the same input).
std::string RemoteMac(absl::string_view key,
                      std::initializer_list<absl::string_view> parts);

// Whether `mac` is RemoteMac(key, parts) for one of `keys` (compared in
// constant time).
bool RemoteMacMatches(absl::string_view mac,
                      const std::vector<std::string>& keys,
                      std::initializer_list<absl::string_view> parts);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_REMOTE_REMOTE_KEYS_H_
