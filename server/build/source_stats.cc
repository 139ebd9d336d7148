#include "server/build/source_stats.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace jitcache {
namespace {

absl::Status Errno(const char* what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("source ", path, ": ", what, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status PlaceSources(const std::vector<SourceStat>& sources) {
  for (const SourceStat& source : sources) {
    const char* path = source.path.c_str();
    struct stat st;
    const bool there = stat(path, &st) == 0;
    if (!source.exists) {
      if (there) {
        return absl::FailedPreconditionError(absl::StrCat(
            "source ", source.path, " is in the view, not the caller's"));
      }
      continue;
    }
    if (there) {
      // Named twice, or the tool's input itself.
      if (!S_ISREG(st.st_mode) ||
          static_cast<uint64_t>(st.st_size) != source.size) {
        return absl::FailedPreconditionError(absl::StrCat(
            "source ", source.path, " cannot be what the caller's is"));
      }
    } else {
      std::error_code ec;
      std::filesystem::create_directories(
          std::filesystem::path(source.path).parent_path(), ec);
      const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) return Errno("create", source.path);
      const bool sized = ftruncate(fd, static_cast<off_t>(source.size)) == 0;
      close(fd);
      if (!sized) return Errno("size", source.path);
    }
    const timespec times[2] = {
        {0, UTIME_OMIT},
        {static_cast<time_t>(source.mtime_ns / 1'000'000'000),
         static_cast<long>(source.mtime_ns % 1'000'000'000)}};
    if (utimensat(AT_FDCWD, path, times, 0) != 0) {
      return Errno("date", source.path);
    }
  }
  return absl::OkStatus();
}

}  // namespace jitcache
