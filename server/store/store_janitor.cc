#include "server/store/store_janitor.h"

#include <algorithm>

#include "common/log.h"

namespace jitcache {

StoreJanitor::StoreJanitor(ObjectStore* store, JanitorOptions options)
    : store_(store),
      options_(std::move(options)),
      last_persist_(options_.now()),
      thread_([this] { Loop(); }) {
  store_->OnWrite([this] { AfterWrite(); });
}

StoreJanitor::~StoreJanitor() {
  store_->OnWrite({});
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
  std::deque<std::function<void(bool)>> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(work_);
  }
  for (auto& w : left) w(false);
  // Last-used times of the final minute are worth keeping.
  if (absl::Status s = store_->PersistLastUsed(); !s.ok()) {
    JITCACHE_LOG(Warning) << "cannot write last-used times: " << s;
  }
}

void StoreJanitor::AfterWrite() {
  Poke();
  if (options_.max_size == 0) return;
  // Past the high watermark the janitor is behind the writers. The writer
  // waits, and helps: it runs the eviction itself, one at a time with the
  // janitor's. Waiting only past the cap itself would let the next write, a
  // flush or a new blob file land above it before anyone evicts; the room
  // between the watermark and the cap is what keeps the cap a cap.
  // Writers are compile workers and import/upload calls, never a hit.
  const uint64_t high = HighWatermarkBytes();
  if (store_->Stats().bytes <= high) return;
  absl::MutexLock lock(&evict_mu_);
  if (store_->Stats().bytes > high) EvictToLowWatermark();
}

uint64_t StoreJanitor::HighWatermarkBytes() const {
  return static_cast<uint64_t>(static_cast<double>(options_.max_size) *
                               options_.high_watermark);
}

void StoreJanitor::Poke() {
  absl::MutexLock lock(&mu_);
  poked_ = true;
}

uint64_t StoreJanitor::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

void StoreJanitor::Enqueue(std::function<absl::StatusOr<EvictionResult>()> work,
                           std::function<void(Report)> done) {
  absl::MutexLock lock(&mu_);
  work_.push_back(
      [this, work = std::move(work), done = std::move(done)](bool run) {
        Report report;
        if (!run) {
          report.status = absl::UnavailableError("the daemon is shutting down");
          return done(std::move(report));
        }
        report.bytes_before = store_->Stats().bytes;
        absl::StatusOr<EvictionResult> result = work();
        if (result.ok()) {
          report.evicted = *result;
        } else {
          report.status = result.status();
        }
        report.bytes_after = store_->Stats().bytes;
        done(std::move(report));
      });
}

void StoreJanitor::EvictNow(std::optional<uint64_t> to_size,
                            std::optional<absl::Time> older_than,
                            std::function<void(Report)> done) {
  Enqueue(
      [this, to_size, older_than]() -> absl::StatusOr<EvictionResult> {
        EvictionResult total;
        if (older_than.has_value()) {
          absl::StatusOr<EvictionResult> r = store_->Evict({{}, older_than});
          if (!r.ok()) return r.status();
          total += *r;
        }
        if (to_size.has_value()) {
          absl::StatusOr<EvictionResult> r = EvictToSize(*to_size);
          if (!r.ok()) return r.status();
          total += *r;
        } else if (absl::Status s = store_->Reclaim(1.0); !s.ok()) {
          return s;
        }
        return total;
      },
      std::move(done));
}

void StoreJanitor::ClearNow(std::function<void(Report)> done) {
  Enqueue(
      [this]() -> absl::StatusOr<EvictionResult> {
        absl::StatusOr<EvictionResult> r = store_->Clear();
        if (!r.ok()) return r;
        if (absl::Status s = store_->Reclaim(1.0); !s.ok()) return s;
        return r;
      },
      std::move(done));
}

absl::StatusOr<EvictionResult> StoreJanitor::EvictToSize(uint64_t target) {
  // The least recently used were mostly written first, so they share the
  // oldest blob files. The first pass's compaction only drops the evicted
  // references, which frees the files that became all garbage without
  // rewriting anything. Only when that is not enough do later passes move
  // live blobs out of a growing fraction of the oldest files; the moved
  // blobs take space until the old files go, so those passes first evict
  // enough to leave room for them under the cap.
  static constexpr double kCutoffs[] = {0.0, 0.1, 0.25, 0.5, 1.0};
  EvictionResult total;
  for (double cutoff : kCutoffs) {
    const StoreStats before = store_->Stats();
    if (before.bytes <= target) break;
    uint64_t goal = target;
    if (options_.max_size > 0 && cutoff > 0) {
      goal = std::min<uint64_t>(
          goal, static_cast<uint64_t>(options_.max_size / (1 + 2 * cutoff)));
    }
    // Live bytes to keep, scaled by how the files compare to them
    // (compression, garbage not collected yet).
    const double ratio =
        std::clamp(before.live_bytes == 0
                       ? 1.0
                       : static_cast<double>(before.bytes) / before.live_bytes,
                   0.02, 8.0);
    absl::StatusOr<EvictionResult> r =
        store_->Evict({static_cast<uint64_t>(goal / ratio), {}});
    if (!r.ok()) return r.status();
    total += *r;
    if (absl::Status s = store_->Reclaim(cutoff); !s.ok()) return s;
  }
  return total;
}

void StoreJanitor::EvictToLowWatermark() {
  const absl::Time start = absl::Now();
  absl::StatusOr<EvictionResult> r = EvictToSize(static_cast<uint64_t>(
      static_cast<double>(options_.max_size) * options_.low_watermark));
  {
    absl::MutexLock lock(&mu_);
    ++runs_;
  }
  if (!r.ok()) {
    JITCACHE_LOG(Warning) << "eviction: " << r.status();
  } else {
    JITCACHE_LOG(Info) << "evicted " << r->records << " records, " << r->objects
                       << " objects (" << r->bytes << " bytes) in "
                       << (absl::Now() - start) << "; store now "
                       << store_->Stats().bytes << " bytes";
  }
}

void StoreJanitor::Housekeep() {
  const absl::Time now = options_.now();
  if (absl::Status s = store_->ResumeWrites(); !s.ok()) {
    JITCACHE_LOG(Debug) << "store writes not resumed: " << s;
  }
  if (options_.max_age.has_value()) {
    absl::StatusOr<EvictionResult> r =
        store_->Evict({{}, now - *options_.max_age});
    if (!r.ok()) {
      JITCACHE_LOG(Warning) << "eviction by age: " << r.status();
    } else if (r->records + r->uploads > 0) {
      JITCACHE_LOG(Info) << "evicted " << r->records << " records and "
                         << r->uploads << " uploads unused for "
                         << *options_.max_age;
    }
  }
  if (options_.max_size > 0) {
    const uint64_t high = HighWatermarkBytes();
    absl::MutexLock lock(&evict_mu_);
    if (store_->Stats().bytes > high) EvictToLowWatermark();
  }
  if (now - last_persist_ >= options_.persist_every) {
    last_persist_ = now;
    if (absl::Status s = store_->PersistLastUsed(); !s.ok()) {
      JITCACHE_LOG(Warning) << "cannot write last-used times: " << s;
    }
  }
}

void StoreJanitor::Loop() {
  while (true) {
    std::deque<std::function<void(bool)>> work;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || poked_ || !work_.empty();
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), options_.tick);
      if (stop_) return;
      poked_ = false;
      work.swap(work_);
    }
    for (auto& w : work) w(true);
    Housekeep();
  }
}

}  // namespace jitcache
