#ifndef JITCACHE_TESTS_TESTING_DAEMON_STATS_H_
#define JITCACHE_TESTS_TESTING_DAEMON_STATS_H_

#include <string>

#include "gtest/gtest.h"
#include "jitcache/client.h"

namespace jitcache::testing {

// The counters of the daemon at `socket`, through the client library (a
// failed call fails the test and gives zeros).
inline DaemonStats StatsOf(const std::string& socket) {
  absl::StatusOr<Client> client = Client::Connect({.socket_path = socket});
  absl::StatusOr<DaemonStats> stats =
      client.ok() ? client->Stats() : client.status();
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : DaemonStats{};
}

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_DAEMON_STATS_H_
