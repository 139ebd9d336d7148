#ifndef JITCACHE_CLIENT_STORE_ADMIN_H_
#define JITCACHE_CLIENT_STORE_ADMIN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jitcache/object_code.h"

namespace jitcache {

// One entry of the daemon's store.
struct StoreEntry {
  std::string key;      // hex
  std::string outcome;  // "OK", "COMPILE_ERROR" or "LINK_ERROR"
  CodeType target = CodeType::kPtx;
  std::string arch;
  std::vector<std::string> options;  // canonical
  std::string program_name;          // empty for a link
  bool is_link = false;
  std::string object_digest;
  uint64_t object_size = 0, record_size = 0, source_bytes = 0, log_size = 0;
  absl::Time created, last_used;
  int64_t compile_time_us = 0;
  std::vector<std::string> input_digests;
  // Show only:
  std::map<std::string, std::string> lowered_names;
  std::string log;
};

struct EvictReport {
  uint64_t records = 0, uploads = 0, objects = 0;
  uint64_t live_bytes = 0;                     // uncompressed bytes removed
  uint64_t bytes_before = 0, bytes_after = 0;  // the store's files
};

struct ListOptions {
  std::string arch;                // empty: all
  std::optional<CodeType> target;  // nullopt: all
  enum class Sort { kUsed, kSize } sort = Sort::kUsed;
  size_t limit = 0;  // 0: all
};

struct ExportFilter {
  std::vector<std::string> archs;         // any of these; empty: all
  std::vector<std::string> key_prefixes;  // any of these (hex); empty: all
};

struct BundleReport {
  uint64_t entries = 0;  // in the bundle (export: written)
  uint64_t bytes = 0;    // of the bundle file
  uint64_t imported = 0, already_present = 0, other_toolchain = 0, corrupt = 0;
  std::vector<std::string> problems;  // the first few, for people
};

// (done, total) as work proceeds; total may be 0 when unknown.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

// The store's inspection and administration calls. Evict, Clear, Config and
// Import are for administrators (root, the daemon's user, --admin_group);
// anyone else gets PERMISSION_DENIED, decided by the daemon from the socket's
// peer credentials. Thread-safety: like Client.
class StoreAdmin {
 public:
  // Does not contact the daemon. Empty path: JITCACHE_SOCKET or the default.
  static StoreAdmin Connect(std::string socket_path = "",
                            absl::Duration deadline = absl::Minutes(30));
  StoreAdmin(StoreAdmin&&) noexcept;
  StoreAdmin& operator=(StoreAdmin&&) noexcept;
  ~StoreAdmin();

  absl::StatusOr<EvictReport> Evict(
      std::optional<uint64_t> to_size,
      std::optional<absl::Duration> older_than) const;
  absl::StatusOr<EvictReport> Clear() const;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Config()
      const;
  // Entries and how many matched before the limit.
  absl::StatusOr<std::pair<std::vector<StoreEntry>, uint64_t>> List(
      const ListOptions& options) const;
  // The one entry whose key starts with `key_prefix` (hex); NOT_FOUND or
  // INVALID_ARGUMENT (ambiguous) otherwise.
  absl::StatusOr<StoreEntry> Show(const std::string& key_prefix) const;

  // Writes the matching entries, with their objects, to a bundle file
  // (complete or absent: it is renamed into place when done).
  absl::StatusOr<BundleReport> Export(const std::string& path,
                                      const ExportFilter& filter,
                                      const ProgressFn& progress = {}) const;
  // Checks the whole bundle first (every frame and object digest; a damaged
  // or truncated file imports nothing), then sends it; the daemon refuses
  // entries of another toolchain, damaged ones and those it has.
  absl::StatusOr<BundleReport> Import(const std::string& path,
                                      const ProgressFn& progress = {}) const;

  const std::string& socket_path() const;

 private:
  struct Impl;
  explicit StoreAdmin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_STORE_ADMIN_H_
