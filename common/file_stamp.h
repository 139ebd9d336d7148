#ifndef JITCACHE_COMMON_FILE_STAMP_H_
#define JITCACHE_COMMON_FILE_STAMP_H_

// What says a file or directory has not changed, for the include scanner
// and the `jitcache` front end's direct-mode memos alike. Plain POSIX (the
// front end loads nothing else). Pure functions but for stat; any thread.
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <string>

namespace jitcache {

struct FileStamp {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

inline int64_t StampNs(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

inline FileStamp StampOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), StampNs(st.st_mtim),
          StampNs(st.st_ctim)};
}

// `path` (symbolic links followed) is still a regular file with `stamp`.
inline bool FileStampHolds(const std::string& path, const FileStamp& stamp) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         StampOf(st) == stamp;
}

// `path` is a directory (or anything) that still has `stamp`.
inline bool StampHolds(const std::string& path, const FileStamp& stamp) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && StampOf(st) == stamp;
}

// A lookup of `path` still finds no regular file there, as it did: an
// error other than absence was not absence.
inline bool StillNoFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return !S_ISREG(st.st_mode);
  return errno == ENOENT || errno == ENOTDIR;
}

}  // namespace jitcache

#endif  // JITCACHE_COMMON_FILE_STAMP_H_
