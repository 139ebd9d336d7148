#ifndef JITCACHE_TESTS_TESTING_DAEMON_STATS_H_
#define JITCACHE_TESTS_TESTING_DAEMON_STATS_H_

#include <string>

#include "gtest/gtest.h"
#include "jitcache/client.h"
#include "tests/testing/test_env.h"

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

// Waits (up to a minute) until no place proof is under way in the daemon at
// `socket`: every miss's answer is then under its final key (a miss is
// answered under its place's key while its proof runs). False on timeout.
inline bool ProofsSettled(const std::string& socket) {
  return WaitFor([&] { return StatsOf(socket).place_proofs_running == 0; },
                 absl::Minutes(1));
}

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_DAEMON_STATS_H_
