#include "server/remote/redis_cluster_map.h"

#include <algorithm>
#include <utility>

namespace jitcache {

RedisClusterMap::RedisClusterMap(const std::vector<RedisEndpoint>& seeds)
    : RedisClusterMap(seeds, Pace()) {}

RedisClusterMap::RedisClusterMap(const std::vector<RedisEndpoint>& seeds,
                                 Pace pace)
    : pace_(pace) {
  slots_.fill(-1);
  for (const RedisEndpoint& seed : seeds) NumberOf(seed);
}

int RedisClusterMap::NumberOf(const RedisEndpoint& endpoint) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i] == endpoint) return static_cast<int>(i);
  }
  nodes_.push_back(endpoint);
  return static_cast<int>(nodes_.size() - 1);
}

RedisEndpoint RedisClusterMap::EndpointOf(int node) const {
  absl::MutexLock lock(&mu_);
  return nodes_.at(node);
}

int RedisClusterMap::MasterOf(int slot) const {
  if (slot < 0 || slot >= kRedisSlots) return -1;
  absl::MutexLock lock(&mu_);
  return slots_[slot];
}

std::vector<int> RedisClusterMap::ReplicasOf(int master) const {
  absl::MutexLock lock(&mu_);
  if (master < 0 || master >= static_cast<int>(replicas_.size())) return {};
  return replicas_[master];
}

void RedisClusterMap::Moved(int slot, int node) {
  absl::MutexLock lock(&mu_);
  if (slot >= 0 && slot < kRedisSlots) slots_[slot] = node;
  due_ = true;
  ++told_;
}

void RedisClusterMap::RefreshSoon() {
  absl::MutexLock lock(&mu_);
  due_ = true;
  ++told_;
}

bool RedisClusterMap::StartRead(absl::Duration wait) {
  const absl::Time asked = absl::Now();
  absl::MutexLock lock(&mu_);
  if (!due_ && asked - last_read_ < pace_.most) return false;
  if (reading_) {
    if (!known_) {
      auto over = [this]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !reading_; };
      mu_.AwaitWithDeadline(absl::Condition(&over), asked + wait);
    }
    return false;
  }
  if (asked - last_read_ < pace_.least) return false;
  reading_ = true;
  last_read_ = asked;
  told_at_read_ = told_;
  return true;
}

std::vector<int> RedisClusterMap::Candidates() const {
  absl::MutexLock lock(&mu_);
  std::vector<int> candidates;
  auto add = [&](int node) {
    if (node >= 0 && std::find(candidates.begin(), candidates.end(), node) ==
                         candidates.end()) {
      candidates.push_back(node);
    }
  };
  for (int node : slots_) add(node);
  for (size_t i = 0; i < nodes_.size(); ++i) add(static_cast<int>(i));
  return candidates;
}

void RedisClusterMap::FinishRead(const Slots& slots, int covered,
                                 Replicas replicas) {
  absl::MutexLock lock(&mu_);
  reading_ = false;
  if (covered == 0) return;
  slots_ = slots;
  replicas_ = std::move(replicas);
  known_ = true;
  due_ = covered < kRedisSlots || told_ != told_at_read_;
}

}  // namespace jitcache
