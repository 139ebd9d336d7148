#ifndef JITCACHE_SERVER_VERIFY_COMMAND_H_
#define JITCACHE_SERVER_VERIFY_COMMAND_H_

#include <string>

namespace jitcache {

// `jitcached --verify`: checks every entry of the store at `path` (which no
// daemon may hold), prints a report and returns the exit status: 0 when all
// is sound, 1 otherwise.
int RunVerify(const std::string& path);

}  // namespace jitcache

#endif  // JITCACHE_SERVER_VERIFY_COMMAND_H_
