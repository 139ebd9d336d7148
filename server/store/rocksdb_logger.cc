#include "server/store/rocksdb_logger.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace jitcache {
namespace {

// A failing store repeats itself (RocksDB retries a full disk every 5 s and
// logs each try): each message, told apart by its format, once a minute.
class DaemonLog final : public rocksdb::Logger {
 public:
  DaemonLog() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}

  // Lines without a level are RocksDB's informational header and
  // statistics dumps.
  void Logv(const char* /*format*/, va_list /*ap*/) override {}

  void Logv(const rocksdb::InfoLogLevel level, const char* format,
            va_list ap) override {
    if (level < GetInfoLogLevel() ||
        level == rocksdb::InfoLogLevel::HEADER_LEVEL) {
      return;
    }
    char line[1024];
    va_list copy;
    va_copy(copy, ap);
    const int n = std::vsnprintf(line, sizeof(line), format, copy);
    va_end(copy);
    if (n < 0) return;
    if (Repeated(format)) return;
    std::string_view text(line, std::min<size_t>(n, sizeof(line) - 1));
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    if (level == rocksdb::InfoLogLevel::WARN_LEVEL) {
      JITCACHE_LOG(Warning) << "store: " << text;
    } else {
      JITCACHE_LOG(Error) << "store: " << text;
    }
  }

 private:
  bool Repeated(const char* format) {
    const absl::Time now = absl::Now();
    absl::MutexLock lock(&mu_);
    auto [it, added] = last_.try_emplace(format, now);
    if (added) return false;
    if (now - it->second < absl::Minutes(1)) return true;
    it->second = now;
    return false;
  }

  absl::Mutex mu_;
  // Formats are string literals of RocksDB: a few hundred at most.
  absl::flat_hash_map<const char*, absl::Time> last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewDaemonLogForRocksDb() {
  return std::make_shared<DaemonLog>();
}

}  // namespace jitcache
