#include "common/resolve_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/text.h"

namespace jitcache {

std::optional<std::string> ResolvePath(std::string_view path,
                                       std::vector<PathLink>* links,
                                       std::string* error) {
  // Components still to walk, the next one last.
  std::vector<std::string> todo;
  auto push = [&todo](std::string_view text) {
    const std::vector<std::string_view> parts = text::Split(text, '/');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      todo.emplace_back(*it);
    }
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
    std::string next = text::Cat(done, "/", part);
    struct stat st;
    if (missing || lstat(next.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      missing = missing || access(next.c_str(), F_OK) != 0;
      done = std::move(next);
      continue;
    }
    if (++hops > 40) {
      *error = text::Cat("too many symbolic links in ", path);
      return std::nullopt;
    }
    char target[4096];
    const ssize_t n = readlink(next.c_str(), target, sizeof(target));
    if (n <= 0 || n == sizeof(target)) {
      *error = text::Cat("cannot read the symbolic link ", next);
      return std::nullopt;
    }
    const std::string_view stored(target, static_cast<size_t>(n));
    if (links != nullptr) links->emplace_back(next, std::string(stored));
    if (stored.front() == '/') done.clear();
    push(stored);
  }
  return done.empty() ? std::string("/") : done;
}

}  // namespace jitcache
