#ifndef JITCACHE_COMMON_PRIVATE_FILE_H_
#define JITCACHE_COMMON_PRIVATE_FILE_H_

// Files a user's processes keep for each other (scan memos, direct-mode
// memos): private to the user, since whoever could write them could choose
// what the user's compiles are keyed on. Plain POSIX, for the `jitcache`
// front end too. Any thread.
#include <string>
#include <string_view>

namespace jitcache {

// Writes `bytes` to DIR/NAME whole or not at all (a reader in another
// process sees the old file or the new one), mode 0600; DIR and any parent
// missing are created, mode 0700. False when it could not be written.
bool KeepPrivateFile(const std::string& dir, const std::string& name,
                     std::string_view bytes);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_PRIVATE_FILE_H_
