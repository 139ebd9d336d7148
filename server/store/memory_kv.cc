// An in-memory KvBackend, for tests and for --store=:memory:.
#include <map>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/store/verifying_store.h"

namespace jitcache {
namespace {

class MemoryKv final : public KvBackend {
 public:
  absl::StatusOr<std::optional<std::string>> Get(
      Column column, absl::string_view key) override {
    absl::MutexLock lock(&mu_);
    const auto& map = Map(column);
    auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }

  absl::Status Write(std::span<const KvWrite> writes) override {
    absl::MutexLock lock(&mu_);
    for (const KvWrite& w : writes) {
      auto& map = Map(w.column);
      if (w.erase) {
        if (auto it = map.find(w.key); it != map.end()) {
          bytes_ -= it->first.size() + it->second.size();
          map.erase(it);
        }
        continue;
      }
      auto [it, inserted] = map.try_emplace(std::string(w.key));
      if (!inserted) bytes_ -= it->first.size() + it->second.size();
      it->second = std::string(w.value);
      bytes_ += it->first.size() + it->second.size();
    }
    return absl::OkStatus();
  }

  absl::Status ForEach(
      Column column,
      const std::function<bool(absl::string_view, absl::string_view)>& visit,
      absl::string_view start) override {
    Map_ snapshot;
    {
      absl::MutexLock lock(&mu_);
      const Map_& map = Map(column);
      snapshot.insert(map.lower_bound(start), map.end());
    }
    for (const auto& [key, value] : snapshot) {
      if (!visit(key, value)) break;
    }
    return absl::OkStatus();
  }

  absl::Status EraseAll(Column column) override {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, value] : Map(column)) {
      bytes_ -= key.size() + value.size();
    }
    Map(column).clear();
    return absl::OkStatus();
  }

  absl::Status Reclaim(double) override { return absl::OkStatus(); }

  uint64_t Bytes() override {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }

 private:
  using Map_ = std::map<std::string, std::string, std::less<>>;
  Map_& Map(Column c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    switch (c) {
      case Column::kObjects:
        return objects_;
      case Column::kActions:
        return actions_;
      case Column::kUploads:
        break;
    }
    return uploads_;
  }

  absl::Mutex mu_;
  Map_ objects_ ABSL_GUARDED_BY(mu_);
  Map_ actions_ ABSL_GUARDED_BY(mu_);
  Map_ uploads_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

std::unique_ptr<VerifyingStore> NewMemoryStore(StoreOptions options) {
  // An empty backend: loading its index cannot fail.
  return *VerifyingStore::Open(std::make_unique<MemoryKv>(),
                               std::move(options));
}

}  // namespace jitcache
