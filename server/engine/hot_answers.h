#ifndef JITCACHE_SERVER_ENGINE_HOT_ANSWERS_H_
#define JITCACHE_SERVER_ENGINE_HOT_ANSWERS_H_

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/engine/sealed_file.h"

namespace jitcache {

// A hit's whole answer as it goes on the wire, kept in memory for the
// next hit on the same key: no store read, decompression, checksum,
// parse or serialisation, and no copy (the framed socket writes these bytes).
struct HotAnswer {
  std::string serialized;  // a CompileResponse, served = SERVED_HIT
  // The store's record version it was built from: the answer is served
  // only while ObjectStore::StillCurrent says the store holds that very
  // record and its objects.
  uint64_t record_version = 0;
  int64_t compile_time_us = 0;  // for the hit's counters
  v1::Outcome outcome = v1::OUTCOME_UNSPECIFIED;
  // A place-free compile key's record that says the answer depends on the
  // place: no answer (no outcome), but where to look
  // (PreparedCompile::placed_key).
  bool place_marker = false;
  bool marker_working_directory_only = false;  // where to look
  bool marker_program_name_only = false;
  bool marker_place_without_times = false;
  // Its log is a template, written for each caller (AnswerFor).
  bool log_template = false;

  // `serialized` as a sealed memory file (sealed_file.h), made on first
  // need and kept as long as the answer: what the framed socket hands a
  // caller that takes large answers that way. nullptr when the kernel
  // refuses one (not asked again for this answer), or while the files
  // alive hold `max_live_bytes` (asked again later). Thread-safe.
  std::shared_ptr<const SealedFile> SharedFile(uint64_t max_live_bytes) const;

 private:
  mutable absl::Mutex file_mu_;
  mutable std::shared_ptr<const SealedFile> file_ ABSL_GUARDED_BY(file_mu_);
  mutable bool file_refused_ ABSL_GUARDED_BY(file_mu_) = false;
};

// The most recently hit answers, bounded in bytes (their serialized size),
// least recently used out first. It decides nothing about validity: the
// caller checks every answer it finds against the store before serving it
// and drops those the store no longer holds.
// Thread-safety: any thread; keys are spread over shards with a lock each.
class HotAnswers {
 public:
  // 0 bytes: keeps nothing.
  explicit HotAnswers(uint64_t max_bytes);

  std::shared_ptr<const HotAnswer> Find(const Digest& key);
  // Replaces any answer for `key`. One larger than a shard's share of the
  // budget is not kept.
  void Keep(const Digest& key, std::shared_ptr<const HotAnswer> answer);
  void Drop(const Digest& key);

  struct Stats {
    uint64_t entries = 0, bytes = 0;
  };
  Stats stats() const;
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable absl::Mutex mu;
    // Most recently used first.
    std::list<std::pair<Digest, std::shared_ptr<const HotAnswer>>> order
        ABSL_GUARDED_BY(mu);
    absl::flat_hash_map<Digest, decltype(order)::iterator> by_key
        ABSL_GUARDED_BY(mu);
    uint64_t bytes ABSL_GUARDED_BY(mu) = 0;
  };
  Shard& ShardOf(const Digest& key);
  static void EraseLocked(Shard& shard, decltype(Shard::order)::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);

  const uint64_t max_bytes_;
  std::array<Shard, kShards> shards_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_HOT_ANSWERS_H_
