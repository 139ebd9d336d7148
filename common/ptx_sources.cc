#include "common/ptx_sources.h"

namespace jitcache {

std::optional<std::vector<std::string>> PtxSourceFiles(std::string_view ptx,
                                                       std::string* why) {
  constexpr size_t kMaxSources = 4096;
  constexpr std::string_view kDirective = ".file";
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  };
  std::vector<std::string> files;
  size_t start = 0;
  while (start <= ptx.size()) {
    size_t end = ptx.find('\n', start);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = ptx.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && space(line.front())) line.remove_prefix(1);
    if (!line.starts_with(kDirective)) continue;
    line.remove_prefix(kDirective.size());
    if (line.empty() || !space(line.front())) continue;
    const size_t open = line.find('"');
    const size_t close =
        open == std::string_view::npos ? open : line.find('"', open + 1);
    if (close == std::string_view::npos) {
      *why = "a .file directive without a quoted name";
      return std::nullopt;
    }
    const std::string_view name = line.substr(open + 1, close - open - 1);
    if (name.find('\\') != std::string_view::npos ||
        files.size() == kMaxSources) {
      *why = "a .file name it cannot read exactly";
      return std::nullopt;
    }
    files.emplace_back(name);
  }
  return files;
}

}  // namespace jitcache
