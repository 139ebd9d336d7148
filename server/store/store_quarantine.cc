#include "server/store/store_quarantine.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace jitcache {

absl::StatusOr<std::string> QuarantineStore(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path store = fs::path(path).lexically_normal();
  const fs::path parent = store.parent_path();
  const std::string prefix = store.filename().string() + ".damaged-";
  const std::string stamp =
      absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone());
  std::error_code ec;
  fs::path aside;
  for (int n = 0;; ++n) {
    aside = parent / absl::StrCat(prefix, stamp, "-", n);
    if (!fs::exists(aside, ec)) break;
  }
  fs::rename(store, aside, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot move the damaged store ",
                                            path, " aside: ", ec.message()));
  }
  // The oldest past the bound go (their names sort by time).
  std::vector<fs::path> kept;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (absl::StartsWith(it->path().filename().string(), prefix)) {
      kept.push_back(it->path());
    }
  }
  std::sort(kept.begin(), kept.end());
  for (size_t i = 0;
       i + kMostQuarantinedStores < kept.size() && kept[i] != aside; ++i) {
    std::error_code removed;
    fs::remove_all(kept[i], removed);
    if (removed) {
      JITCACHE_LOG(Warning) << "cannot remove the old damaged store "
                            << kept[i].string() << ": " << removed.message();
    }
  }
  return aside.string();
}

}  // namespace jitcache
