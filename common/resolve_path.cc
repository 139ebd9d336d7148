#include "common/resolve_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace jitcache {

absl::StatusOr<std::string> ResolvePath(absl::string_view path,
                                        std::vector<PathLink>* links) {
  // Components still to walk, the next one last.
  std::vector<std::string> todo;
  auto push = [&todo](absl::string_view text) {
    std::vector<std::string> parts = absl::StrSplit(text, '/');
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  };
  push(path);
  std::string done;  // resolved so far; "" is "/"
  bool missing = false;
  int hops = 0;
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      const size_t slash = done.rfind('/');
      done.resize(slash == std::string::npos ? 0 : slash);
      continue;
    }
    std::string next = absl::StrCat(done, "/", part);
    struct stat st;
    if (missing || lstat(next.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      missing = missing || access(next.c_str(), F_OK) != 0;
      done = std::move(next);
      continue;
    }
    if (++hops > 40) {
      return absl::FailedPreconditionError(
          absl::StrCat("too many symbolic links in ", path));
    }
    char target[4096];
    const ssize_t n = readlink(next.c_str(), target, sizeof(target));
    if (n <= 0 || n == sizeof(target)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read the symbolic link ", next));
    }
    const absl::string_view stored(target, n);
    if (links != nullptr) links->emplace_back(next, std::string(stored));
    if (stored.front() == '/') done.clear();
    push(stored);
  }
  return done.empty() ? std::string("/") : done;
}

}  // namespace jitcache
