#include "server/engine/hot_answers.h"

#include <utility>

namespace jitcache {

std::shared_ptr<const SealedFile> HotAnswer::SharedFile(
    uint64_t max_live_bytes) const {
  absl::MutexLock lock(&file_mu_);
  if (file_ == nullptr && !file_refused_) {
    bool at_limit = false;
    file_ = SealedFile::Create(serialized, max_live_bytes, &at_limit);
    file_refused_ = file_ == nullptr && !at_limit;
  }
  return file_;
}

HotAnswers::HotAnswers(uint64_t max_bytes) : max_bytes_(max_bytes) {}

HotAnswers::Shard& HotAnswers::ShardOf(const Digest& key) {
  // The key is a SHA-256: any byte of it is uniform.
  return shards_[static_cast<unsigned char>(key.AsBytes()[0]) % kShards];
}

void HotAnswers::EraseLocked(Shard& shard,
                             decltype(Shard::order)::iterator it) {
  shard.bytes -= it->second->serialized.size();
  shard.by_key.erase(it->first);
  shard.order.erase(it);
}

std::shared_ptr<const HotAnswer> HotAnswers::Find(const Digest& key) {
  if (max_bytes_ == 0) return nullptr;
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.by_key.find(key);
  if (it == shard.by_key.end()) return nullptr;
  shard.order.splice(shard.order.begin(), shard.order, it->second);
  return it->second->second;
}

void HotAnswers::Keep(const Digest& key,
                      std::shared_ptr<const HotAnswer> answer) {
  const uint64_t budget = max_bytes_ / kShards;
  const uint64_t size = answer->serialized.size();
  if (size > budget) return;
  Shard& shard = ShardOf(key);
  // The answers pushed out are freed outside the lock.
  std::list<std::pair<Digest, std::shared_ptr<const HotAnswer>>> out;
  absl::MutexLock lock(&shard.mu);
  if (auto it = shard.by_key.find(key); it != shard.by_key.end()) {
    EraseLocked(shard, it->second);
  }
  while (shard.bytes + size > budget && !shard.order.empty()) {
    auto last = std::prev(shard.order.end());
    shard.bytes -= last->second->serialized.size();
    shard.by_key.erase(last->first);
    out.splice(out.begin(), shard.order, last);
  }
  shard.order.emplace_front(key, std::move(answer));
  shard.by_key[key] = shard.order.begin();
  shard.bytes += size;
}

void HotAnswers::Drop(const Digest& key) {
  Shard& shard = ShardOf(key);
  absl::MutexLock lock(&shard.mu);
  if (auto it = shard.by_key.find(key); it != shard.by_key.end()) {
    EraseLocked(shard, it->second);
  }
}

HotAnswers::Stats HotAnswers::stats() const {
  Stats stats;
  for (const Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    stats.entries += shard.order.size();
    stats.bytes += shard.bytes;
  }
  return stats;
}

}  // namespace jitcache
