#ifndef JITCACHE_TESTS_TESTING_TEAM_TIER_H_
#define JITCACHE_TESTS_TESTING_TEAM_TIER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/remote/redis_tier.h"
#include "server/remote/remote_keys.h"

namespace jitcache::testing {

// A node's connection to the team tier at `url` (a RedisServer's url()),
// signing and verifying with the keys of `key_file` as jitcached's
// --remote_key_file does.
inline absl::StatusOr<std::unique_ptr<RedisTier>> OpenTeamTier(
    const std::string& url, const std::string& key_file) {
  absl::StatusOr<std::vector<std::string>> keys = LoadRemoteKeys(key_file);
  if (!keys.ok()) return keys.status();
  RemoteOptions options;
  options.url = url;
  options.keys = *std::move(keys);
  return RedisTier::Create(std::move(options));
}

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_TEAM_TIER_H_
