#include "server/build/include_tree.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/compile_options.h"
#include "common/fd_io.h"

namespace jitcache {
namespace {

// `path` as a C string literal's contents.
std::string Escaped(absl::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Blanks and comments at the start of `text`.
size_t SkipBlanksAndComments(absl::string_view text, size_t at) {
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' ||
        text[at] == '\r') {
      ++at;
    } else if (text.substr(at, 2) == "//") {
      at = text.find('\n', at);
      if (at == absl::string_view::npos) return text.size();
    } else if (text.substr(at, 2) == "/*") {
      at = text.find("*/", at + 2);
      if (at == absl::string_view::npos) return text.size();
      at += 2;
    } else {
      break;
    }
  }
  return at;
}

// After "#" DIRECTIVE NAME at `at` (blanks allowed around "#"), the end of
// that line; npos if the text has something else there.
size_t MatchDirective(absl::string_view text, size_t at,
                      absl::string_view directive, std::string* name) {
  auto blanks = [&](size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i;
  };
  if (at >= text.size() || text[at] != '#') return absl::string_view::npos;
  at = blanks(at + 1);
  if (text.substr(at, directive.size()) != directive) {
    return absl::string_view::npos;
  }
  at += directive.size();
  const size_t start = blanks(at);
  if (start == at) return absl::string_view::npos;
  size_t end = start;
  while (end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[end])) ||
          text[end] == '_')) {
    ++end;
  }
  if (end == start) return absl::string_view::npos;
  *name = std::string(text.substr(start, end - start));
  const size_t eol = text.find('\n', end);
  return eol == absl::string_view::npos ? absl::string_view::npos : eol + 1;
}

// `contents` with a #line naming `path`. Where the file opens with an
// include guard (#ifndef X / #define X), the #line goes after it: before
// it, the compiler no longer sees the guard and reads the file again at
// every #include (CUB compiles 15% slower so).
std::string WithLine(absl::string_view path, absl::string_view contents) {
  std::string guard, defined;
  size_t head = 0;
  const size_t ifndef = MatchDirective(
      contents, SkipBlanksAndComments(contents, 0), "ifndef", &guard);
  if (ifndef != absl::string_view::npos) {
    const size_t define = MatchDirective(
        contents, SkipBlanksAndComments(contents, ifndef), "define", &defined);
    if (define != absl::string_view::npos && defined == guard) head = define;
  }
  const size_t line =
      std::count(contents.begin(), contents.begin() + head, '\n') + 1;
  return absl::StrCat(contents.substr(0, head), "#line ", line, " \"",
                      Escaped(path), "\"\n", contents.substr(head));
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string DefaultScratchDir() {
  if (::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  std::error_code ec;
  std::string temp = std::filesystem::temp_directory_path(ec).string();
  return ec ? "/tmp" : temp;
}

absl::StatusOr<std::unique_ptr<IncludeTree>> IncludeTree::Write(
    const std::string& parent, const Files& files) {
  std::string pattern = parent + "/jitcache-include-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Errno("create a directory in", parent);
  }
  auto tree = std::unique_ptr<IncludeTree>(new IncludeTree(pattern));
  std::error_code ec;
  for (const auto& [path, contents] : files) {
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
    const std::string text = WithLine(path, contents);
    const bool written = WriteFully(fd, text.data(), text.size());
    ::close(fd);
    if (!written) return Errno("write", target);
  }
  return tree;
}

absl::Status IncludeTree::Apply(const std::vector<std::string>& dirs,
                                CompileJob* job) const {
  std::error_code ec;
  for (const std::string& dir : dirs) {
    std::filesystem::create_directories(root_ + dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir));
  }
  for (std::string& option : job->options) {
    if (!absl::StartsWith(option, kIncludePathOption)) continue;
    const std::string dir = option.substr(kIncludePathOption.size());
    for (const std::string& user : dirs) {
      if (dir == user) {
        option = absl::StrCat(kIncludePathOption, root_, dir);
        break;
      }
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<const IncludeTree> IncludeTrees::Find(const Digest& set) {
  absl::MutexLock lock(&mu_);
  auto it = trees_.find(set);
  if (it == trees_.end()) return nullptr;
  order_.erase(std::find(order_.begin(), order_.end(), set));
  order_.push_back(set);
  return it->second;
}

absl::StatusOr<std::shared_ptr<const IncludeTree>> IncludeTrees::Make(
    const Digest& set, const IncludeTree::Files& files) {
  if (std::shared_ptr<const IncludeTree> kept = Find(set)) return kept;
  absl::StatusOr<std::unique_ptr<IncludeTree>> written =
      IncludeTree::Write(scratch_dir_, files);
  if (!written.ok()) return written.status();
  std::shared_ptr<const IncludeTree> tree = *std::move(written);
  std::vector<std::shared_ptr<const IncludeTree>> evicted;  // freed unlocked
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = trees_.try_emplace(set, tree);
  if (!inserted) return it->second;  // laid out meanwhile by another compile
  order_.push_back(set);
  while (order_.size() > keep_) {
    evicted.push_back(std::move(trees_[order_.front()]));
    trees_.erase(order_.front());
    order_.pop_front();
  }
  return tree;
}

IncludeTree::~IncludeTree() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

}  // namespace jitcache
