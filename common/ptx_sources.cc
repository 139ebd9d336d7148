#include "common/ptx_sources.h"

namespace jitcache {

namespace {

bool Space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' ||
         c == '\n';
}

// A name ptxas's stat would find in its own process, not the caller's
// ("/proc/self/exe" is ptxas there, jitcache-ptxas here).
bool NamesAProcess(std::string_view name) {
  for (std::string_view prefix : {"/proc/", "/dev/fd/", "/dev/std"}) {
    if (name.starts_with(prefix)) return true;
  }
  return name == "/proc" || name == "/dev/fd";
}

}  // namespace

std::optional<std::vector<std::string>> PtxSourceFiles(std::string_view ptx,
                                                       std::string* why) {
  constexpr size_t kMaxSources = 4096;
  constexpr std::string_view kDirective = ".file";
  std::vector<std::string> files;
  // Where a directive may start: the text's start, after white space, a
  // statement's end, a brace or a comment (ptxas reads ".file" there, not
  // only at a line's start).
  bool boundary = true;
  size_t i = 0;
  while (i < ptx.size()) {
    const char c = ptx[i];
    if (ptx.substr(i, 2) == "//") {
      const size_t end = ptx.find('\n', i);
      if (end == std::string_view::npos) break;
      i = end + 1;
      boundary = true;
      continue;
    }
    if (ptx.substr(i, 2) == "/*") {
      const size_t end = ptx.find("*/", i + 2);
      if (end == std::string_view::npos) {
        *why = "an unterminated block comment";
        return std::nullopt;
      }
      i = end + 2;
      boundary = true;
      continue;
    }
    if (c == '"') {
      const size_t close = ptx.find('"', i + 1);
      if (close == std::string_view::npos) break;
      i = close + 1;
      boundary = false;
      continue;
    }
    if (boundary && ptx.substr(i, kDirective.size()) == kDirective &&
        i + kDirective.size() < ptx.size() &&
        Space(ptx[i + kDirective.size()])) {
      // ".file INDEX "NAME"[, TIME, SIZE]": the index, then the name.
      size_t at = i + kDirective.size();
      while (at < ptx.size() &&
             (Space(ptx[at]) || (ptx[at] >= '0' && ptx[at] <= '9'))) {
        ++at;
      }
      const size_t close = at < ptx.size() && ptx[at] == '"'
                               ? ptx.find('"', at + 1)
                               : std::string_view::npos;
      if (close == std::string_view::npos) {
        *why = "a .file directive without a quoted name";
        return std::nullopt;
      }
      const std::string_view name = ptx.substr(at + 1, close - at - 1);
      if (name.find('\\') != std::string_view::npos ||
          name.find('\n') != std::string_view::npos ||
          files.size() == kMaxSources) {
        *why = "a .file name it cannot read exactly";
        return std::nullopt;
      }
      if (NamesAProcess(name)) {
        *why = "a .file name that names a process's own files";
        return std::nullopt;
      }
      files.emplace_back(name);
      i = close + 1;
      boundary = false;
      continue;
    }
    boundary = Space(c) || c == ';' || c == '{' || c == '}';
    ++i;
  }
  return files;
}

}  // namespace jitcache
