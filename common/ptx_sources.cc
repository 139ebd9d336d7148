#include "common/ptx_sources.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jitcache {

absl::StatusOr<std::vector<std::string>> PtxSourceFiles(absl::string_view ptx) {
  constexpr size_t kMaxSources = 4096;
  std::vector<std::string> files;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, ".file")) continue;
    if (line.empty() || !absl::ascii_isspace(line.front())) continue;
    const size_t open = line.find('"');
    const size_t close =
        open == absl::string_view::npos ? open : line.find('"', open + 1);
    if (close == absl::string_view::npos) {
      return absl::FailedPreconditionError(
          "for the real ptxas: a .file directive without a quoted name");
    }
    const absl::string_view name = line.substr(open + 1, close - open - 1);
    if (absl::StrContains(name, '\\') || files.size() == kMaxSources) {
      return absl::FailedPreconditionError(
          "for the real ptxas: a .file name it cannot read exactly");
    }
    files.emplace_back(name);
  }
  return files;
}

}  // namespace jitcache
