#include "server/store/store_release.h"

#include <rocksdb/env.h>
#include <rocksdb/utilities/options_util.h>
#include <rocksdb/version.h>

#include <array>
#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jitcache {

std::optional<std::string> NewerRocksDbRelease(const std::string& path) {
  std::string options;
  if (!rocksdb::GetLatestOptionsFileName(path, rocksdb::Env::Default(),
                                         &options)
           .ok()) {
    return std::nullopt;
  }
  std::ifstream in(path + "/" + options);
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
