// jitcache-worker's own stat calls (path_stats.h): the C library's, counted.
// Defined in the executable, they come before the C library's for every
// library it loads (nvJitLink calls __xstat, the symbol glibc's stat was
// before 2.33); exported with --export-dynamic-symbol (server/CMakeLists.txt).
#include <fcntl.h>
#include <sys/stat.h>

#include "server/build/path_stats.h"

namespace {

int Counted(const char* path, struct stat* out, int flags) {
  jitcache::PathStatsMade().fetch_add(1, std::memory_order_relaxed);
  return fstatat(AT_FDCWD, path, out, flags);
}

}  // namespace

extern "C" {

// (`version` is the struct's layout; x86-64 and AArch64 have one.)
int __xstat(int /*version*/, const char* path, struct stat* out) {
  return Counted(path, out, 0);
}

int __lxstat(int /*version*/, const char* path, struct stat* out) {
  return Counted(path, out, AT_SYMLINK_NOFOLLOW);
}

int stat(const char* path, struct stat* out) { return Counted(path, out, 0); }

int lstat(const char* path, struct stat* out) {
  return Counted(path, out, AT_SYMLINK_NOFOLLOW);
}

}  // extern "C"
