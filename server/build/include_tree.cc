#include "server/build/include_tree.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/fd_io.h"

namespace jitcache {
namespace {

constexpr absl::string_view kIncludePathOption = "--include-path=";

// `path` as a C string literal's contents.
std::string Escaped(absl::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<IncludeTree>> IncludeTree::Apply(
    const std::string& parent, CompileJob* job) {
  if (job->user_include_dirs.empty()) return nullptr;
  std::string pattern = parent + "/jitcache-include-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Errno("create a directory in", parent);
  }
  auto tree = std::unique_ptr<IncludeTree>(new IncludeTree(pattern));
  std::error_code ec;
  for (const std::string& dir : job->user_include_dirs) {
    // Every directory exists, as on the client, even one nothing came from.
    std::filesystem::create_directories(tree->root_ + dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir));
  }
  for (const auto& [path, contents] : job->included_files) {
    const std::string target = tree->root_ + path;
    std::filesystem::create_directories(
        std::filesystem::path(target).parent_path(), ec);
    const int fd =
        ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      // A path that is also another file's directory, for instance.
      return absl::InvalidArgumentError(
          absl::StrCat("included file '", path,
                       "' cannot be laid out: ", std::strerror(errno)));
    }
    const std::string line = absl::StrCat("#line 1 \"", Escaped(path), "\"\n");
    const bool written = WriteFully(fd, line.data(), line.size()) &&
                         WriteFully(fd, contents.data(), contents.size());
    ::close(fd);
    if (!written) return Errno("write", target);
  }
  for (std::string& option : job->options) {
    if (!absl::StartsWith(option, kIncludePathOption)) continue;
    const std::string dir = option.substr(kIncludePathOption.size());
    for (const std::string& user : job->user_include_dirs) {
      if (dir == user) {
        option = absl::StrCat(kIncludePathOption, tree->root_, dir);
        break;
      }
    }
  }
  job->included_files.clear();
  return tree;
}

IncludeTree::~IncludeTree() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

}  // namespace jitcache
