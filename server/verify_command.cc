#include "server/verify_command.h"

#include <cstdio>

#include "server/store/node_store.h"

namespace jitcache {

int RunVerify(const std::string& path) {
  if (path == ":memory:") {
    std::fprintf(stderr,
                 "jitcached: an in-memory store has nothing to verify\n");
    return 1;
  }
  // First, before a normal open replays it (and drops what follows any
  // damage): the write-ahead log, with no tolerance.
  const absl::Status wal = CheckWriteAheadLog(path);
  // Damage is reported, not repaired: verifying changes nothing.
  RocksDbOptions options;
  options.recover_damage = false;
  auto store = OpenRocksDbStore(path, options);
  if (!store.ok()) {
    std::fprintf(stderr, "jitcached: %s\n",
                 std::string(store.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<VerifyReport> report = (*store)->Verify();
  if (!report.ok()) {
    std::fprintf(stderr, "jitcached: verify failed: %s\n",
                 std::string(report.status().message()).c_str());
    return 1;
  }
  std::printf(
      "store %s: %llu objects, %llu records; %llu bad objects, %llu bad "
      "records, %llu records with a missing object, %llu unreferenced "
      "objects\n",
      path.c_str(), static_cast<unsigned long long>(report->objects),
      static_cast<unsigned long long>(report->records),
      static_cast<unsigned long long>(report->bad_objects),
      static_cast<unsigned long long>(report->bad_records),
      static_cast<unsigned long long>(report->dangling_records),
      static_cast<unsigned long long>(report->unreferenced_objects));
  for (const std::string& p : report->problems)
    std::printf("  %s\n", p.c_str());
  if (!wal.ok()) {
    std::printf("  %s\n", std::string(wal.message()).c_str());
    return 1;
  }
  return report->ok() ? 0 : 1;
}

}  // namespace jitcache
