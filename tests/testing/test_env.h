#ifndef JITCACHE_TESTS_TESTING_TEST_ENV_H_
#define JITCACHE_TESTS_TESTING_TEST_ENV_H_

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace jitcache::testing {

// Polls `done` every 20 ms; false if it is still false after `timeout`.
bool WaitFor(const std::function<bool()>& done,
             absl::Duration timeout = absl::Minutes(1));

void WriteFile(const std::string& path, const std::string& contents);
std::string ReadFile(const std::string& path);

// The full path of `program` on $PATH (or in /usr/sbin, /sbin); nullopt
// when it is not installed.
std::optional<std::string> FindProgram(const std::string& program);

// A listening Unix stream socket bound to `path`, as a service manager
// holds one; the caller closes it.
absl::StatusOr<int> ListenOn(const std::string& path);

// Prometheus text format, parsed strictly: every sample line must be
// `name{labels} value` with a name that a `# TYPE` line declared (or its
// _bucket/_sum/_count). Keys are "name{labels}" exactly as written.
absl::StatusOr<std::map<std::string, double>> ParsePrometheusText(
    const std::string& text);

// GET http://127.0.0.1:PORT/PATH; the body, or an error naming what failed.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_TEST_ENV_H_
