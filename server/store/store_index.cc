#include "server/store/store_index.h"

#include <algorithm>
#include <limits>

namespace jitcache {

void StoreIndex::Put(Kind kind, absl::string_view key, int64_t last_used_ms,
                     uint64_t bytes, const std::vector<Object>& objects) {
  absl::MutexLock lock(&mu_);
  // Take the new references before dropping the old ones, so that an
  // object named by both versions never reaches zero in between.
  Entry entry;
  entry.version = ++last_version_;
  entry.last_used_ms = last_used_ms;
  entry.bytes = bytes;
  for (const Object& object : objects) {
    if (std::find(entry.objects.begin(), entry.objects.end(), object.digest) !=
        entry.objects.end()) {
      continue;
    }
    entry.objects.push_back(object.digest);
    auto [it, inserted] = objects_.try_emplace(object.digest);
    if (inserted) {
      it->second.bytes = object.bytes;
      live_bytes_ += object.bytes;
    }
    ++it->second.refs;
  }
  RemoveLocked(kind, key);
  live_bytes_ += bytes;
  auto it = Entries(kind).emplace(std::string(key), std::move(entry)).first;
  lru_.emplace(last_used_ms, kind, it->first);
}

void StoreIndex::Touch(absl::string_view key, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(key);
  if (it != records_.end()) TouchLocked(it, now_ms);
}

std::optional<uint64_t> StoreIndex::RecordVersion(absl::string_view key) const {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(key);
  if (it == records_.end()) return std::nullopt;
  return it->second.version;
}

bool StoreIndex::TouchIfCurrent(absl::string_view key, uint64_t version,
                                int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(key);
  if (it == records_.end() || it->second.version != version) return false;
  // An object found damaged is forgotten while its records stay (their own
  // lookups drop them).
  for (const std::string& digest : it->second.objects) {
    if (!objects_.contains(digest)) return false;
  }
  TouchLocked(it, now_ms);
  return true;
}

void StoreIndex::TouchLocked(EntryMap::iterator it, int64_t now_ms) {
  if (it->second.last_used_ms >= now_ms) return;
  auto node = lru_.extract({it->second.last_used_ms, Kind::kRecord, it->first});
  std::get<0>(node.value()) = now_ms;
  lru_.insert(std::move(node));
  it->second.last_used_ms = now_ms;
  touched_.insert(it->first);
}

bool StoreIndex::Contains(Kind kind, absl::string_view key) const {
  absl::MutexLock lock(&mu_);
  return Entries(kind).contains(key);
}

bool StoreIndex::HasObject(absl::string_view digest) const {
  absl::MutexLock lock(&mu_);
  return objects_.contains(digest);
}

std::optional<uint64_t> StoreIndex::ObjectBytes(
    absl::string_view digest) const {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(digest);
  if (it == objects_.end()) return std::nullopt;
  return it->second.bytes;
}

void StoreIndex::ForgetObject(absl::string_view digest) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(digest);
  if (it == objects_.end()) return;
  live_bytes_ -= it->second.bytes;
  objects_.erase(it);
}

StoreIndex::Victims StoreIndex::Pick(uint64_t max_live_bytes,
                                     int64_t older_than_ms,
                                     size_t max_entries) const {
  absl::MutexLock lock(&mu_);
  Victims victims;
  // References each object would lose; an object goes when it loses all.
  absl::flat_hash_map<std::string, uint32_t> lost;
  for (const auto& [last_used, kind, key] : lru_) {
    if (victims.entries.size() >= max_entries) break;
    const bool over_size = live_bytes_ - victims.bytes > max_live_bytes;
    if (!over_size && last_used >= older_than_ms) break;
    const Entry& entry = Entries(kind).at(key);
    victims.entries.emplace_back(kind, std::string(key));
    victims.bytes += entry.bytes;
    for (const std::string& digest : entry.objects) {
      auto object = objects_.find(digest);
      if (object == objects_.end()) continue;
      if (++lost[digest] == object->second.refs) {
        victims.objects.push_back(digest);
        victims.bytes += object->second.bytes;
      }
    }
  }
  return victims;
}

std::vector<std::string> StoreIndex::RemoveLocked(Kind kind,
                                                  absl::string_view key) {
  std::vector<std::string> orphans;
  EntryMap& entries = Entries(kind);
  auto it = entries.find(key);
  if (it == entries.end()) return orphans;
  Entry& entry = it->second;
  lru_.erase(Order{entry.last_used_ms, kind, it->first});
  live_bytes_ -= entry.bytes;
  for (const std::string& digest : entry.objects) {
    auto object = objects_.find(digest);
    if (object == objects_.end()) continue;
    if (--object->second.refs == 0) {
      live_bytes_ -= object->second.bytes;
      orphans.push_back(digest);
      objects_.erase(object);
    }
  }
  if (kind == Kind::kRecord) touched_.erase(it->first);
  entries.erase(it);
  return orphans;
}

std::vector<std::string> StoreIndex::Remove(Kind kind, absl::string_view key) {
  absl::MutexLock lock(&mu_);
  return RemoveLocked(kind, key);
}

void StoreIndex::Remove(const Victims& victims) {
  absl::MutexLock lock(&mu_);
  for (const auto& [kind, key] : victims.entries) RemoveLocked(kind, key);
}

void StoreIndex::Clear() {
  absl::MutexLock lock(&mu_);
  records_.clear();
  uploads_.clear();
  lru_.clear();
  objects_.clear();
  touched_.clear();
  live_bytes_ = 0;
}

std::vector<std::pair<std::string, int64_t>> StoreIndex::TakeTouched() {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(touched_.size());
  for (absl::string_view key : touched_) {
    out.emplace_back(std::string(key), records_.find(key)->second.last_used_ms);
  }
  touched_.clear();
  return out;
}

uint64_t StoreIndex::live_bytes() const {
  absl::MutexLock lock(&mu_);
  return live_bytes_;
}

size_t StoreIndex::records() const {
  absl::MutexLock lock(&mu_);
  return records_.size();
}

size_t StoreIndex::uploads() const {
  absl::MutexLock lock(&mu_);
  return uploads_.size();
}

size_t StoreIndex::objects() const {
  absl::MutexLock lock(&mu_);
  return objects_.size();
}

}  // namespace jitcache
