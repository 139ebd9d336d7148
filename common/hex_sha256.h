#ifndef JITCACHE_COMMON_HEX_SHA256_H_
#define JITCACHE_COMMON_HEX_SHA256_H_

#include <string>
#include <string_view>

namespace jitcache {

// The lower-case hex SHA-256 of `bytes` (as the daemon names objects),
// computed here for the front ends that load nothing but libc and
// libstdc++ (libnvJitLink.so.13's inputs, the `jitcache` front end's
// files): no libcrypto, whose loading and first use cost each process 1-2
// ms and would touch the host program's OpenSSL state. With the CPU's SHA
// instructions (x86 SHA-NI) when it has them (1.4 GB/s on an EPYC core),
// else plain C++ (0.3 GB/s). Pure; thread-safe.
std::string HexSha256(std::string_view bytes);

// The same, by the plain C++ code alone unless `cpu_instructions` (which
// then holds only where the CPU has them): for the tests of both.
std::string HexSha256ForTest(std::string_view bytes, bool cpu_instructions);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_HEX_SHA256_H_
