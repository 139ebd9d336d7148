// jitcache-worker's own stat calls (path_stats.h): the C library's, counted.
// Defined in the executable, they come before the C library's for every
// library it loads (nvJitLink 13.0 calls __xstat, the symbol glibc's stat
// was before 2.33; the rest are here for libraries built otherwise:
// 64-bit-offset spellings, fstatat and statx); exported with
// --export-dynamic-symbol (server/CMakeLists.txt). Each asks the kernel
// itself, so that none of them calls another of them.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/build/path_stats.h"

namespace {

void Count(const char* path, int flags) {
  // A descriptor's stat (an empty path with AT_EMPTY_PATH) names no file.
  if (path != nullptr && !(path[0] == '\0' && (flags & AT_EMPTY_PATH) != 0) &&
      !jitcache::PathStatAllowed(path)) {
    jitcache::PathStatsMade().fetch_add(1, std::memory_order_relaxed);
  }
}

// (struct stat64 is struct stat on x86-64 and AArch64.)
int Counted(int dir, const char* path, void* out, int flags) {
  Count(path, flags);
  return static_cast<int>(syscall(SYS_newfstatat, dir, path, out, flags));
}

}  // namespace

extern "C" {

// (`version` is the struct's layout; x86-64 and AArch64 have one.)
int __xstat(int /*version*/, const char* path, struct stat* out) {
  return Counted(AT_FDCWD, path, out, 0);
}
int __lxstat(int /*version*/, const char* path, struct stat* out) {
  return Counted(AT_FDCWD, path, out, AT_SYMLINK_NOFOLLOW);
}
int __xstat64(int /*version*/, const char* path, struct stat64* out) {
  return Counted(AT_FDCWD, path, out, 0);
}
int __lxstat64(int /*version*/, const char* path, struct stat64* out) {
  return Counted(AT_FDCWD, path, out, AT_SYMLINK_NOFOLLOW);
}
int __fxstatat(int /*version*/, int dir, const char* path, struct stat* out,
               int flags) {
  return Counted(dir, path, out, flags);
}
int __fxstatat64(int /*version*/, int dir, const char* path, struct stat64* out,
                 int flags) {
  return Counted(dir, path, out, flags);
}

int stat(const char* path, struct stat* out) {
  return Counted(AT_FDCWD, path, out, 0);
}
int lstat(const char* path, struct stat* out) {
  return Counted(AT_FDCWD, path, out, AT_SYMLINK_NOFOLLOW);
}
int stat64(const char* path, struct stat64* out) {
  return Counted(AT_FDCWD, path, out, 0);
}
int lstat64(const char* path, struct stat64* out) {
  return Counted(AT_FDCWD, path, out, AT_SYMLINK_NOFOLLOW);
}
int fstatat(int dir, const char* path, struct stat* out, int flags) {
  return Counted(dir, path, out, flags);
}
int fstatat64(int dir, const char* path, struct stat64* out, int flags) {
  return Counted(dir, path, out, flags);
}
int statx(int dir, const char* path, int flags, unsigned int mask,
          struct statx* out) {
  Count(path, flags);
  return static_cast<int>(syscall(SYS_statx, dir, path, flags, mask, out));
}

}  // extern "C"
