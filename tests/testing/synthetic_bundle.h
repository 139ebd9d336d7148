#ifndef JITCACHE_TESTS_TESTING_SYNTHETIC_BUNDLE_H_
#define JITCACHE_TESTS_TESTING_SYNTHETIC_BUNDLE_H_

#include <string>

#include "absl/status/status.h"

namespace jitcache::testing {

// Writes a bundle of `entries` cubin entries, each with an incompressible
// object of `object_bytes` (a multiple of 32), as if exported by a daemon
// whose toolchain fingerprint is `fingerprint_hex`.
absl::Status WriteSyntheticBundle(const std::string& path,
                                  const std::string& fingerprint_hex,
                                  int entries, size_t object_bytes = 64 << 10);

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_SYNTHETIC_BUNDLE_H_
