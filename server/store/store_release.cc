#include "server/store/store_release.h"

#include <rocksdb/version.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jitcache {
namespace {

// The newest OPTIONS-NNNNNN file in `path` (RocksDB numbers them in
// order); empty when there is none.
std::string NewestOptionsFile(const std::string& path) {
  std::string newest;
  uint64_t newest_number = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(path, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    absl::string_view digits = name;
    uint64_t number = 0;
    if (absl::ConsumePrefix(&digits, "OPTIONS-") &&
        absl::SimpleAtoi(digits, &number) && number >= newest_number) {
      newest_number = number;
      newest = it->path().string();
    }
  }
  return newest;
}

}  // namespace

std::optional<std::string> NewerRocksDbRelease(const std::string& path) {
  const std::string options = NewestOptionsFile(path);
  if (options.empty()) return std::nullopt;
  std::ifstream in(options);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view value = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&value, "rocksdb_version=")) continue;
    const std::vector<absl::string_view> parts = absl::StrSplit(value, '.');
    const std::array<int, 3> ours = {ROCKSDB_MAJOR, ROCKSDB_MINOR,
                                     ROCKSDB_PATCH};
    for (size_t i = 0; i < parts.size() && i < ours.size(); ++i) {
      int theirs = 0;
      if (!absl::SimpleAtoi(parts[i], &theirs)) return std::nullopt;
      if (theirs != ours[i]) {
        if (theirs < ours[i]) return std::nullopt;
        return std::string(value);
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace jitcache
