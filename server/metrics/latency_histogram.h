#ifndef JITCACHE_SERVER_METRICS_LATENCY_HISTOGRAM_H_
#define JITCACHE_SERVER_METRICS_LATENCY_HISTOGRAM_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/time/time.h"

namespace jitcache {

// Counts durations into fixed buckets, from 25 µs (a hit) to 10 minutes
// (the default compile-time limit), about 2.5x apart. Observe is a few
// relaxed atomic adds, cheap enough for the hit path.
// Thread-safety: any thread.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 22> kUpperBoundsSeconds = {
      25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3,
      10e-3, 25e-3, 50e-3,  0.1,    0.25,   0.5,  1,      2.5,
      5,     10,    30,     60,     120,    600};
  static constexpr size_t kBuckets = kUpperBoundsSeconds.size() + 1;  // +Inf

  void Observe(absl::Duration d) {
    const double seconds = absl::ToDoubleSeconds(d);
    size_t i = 0;
    while (i < kUpperBoundsSeconds.size() && seconds > kUpperBoundsSeconds[i]) {
      ++i;
    }
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(absl::ToInt64Nanoseconds(d), std::memory_order_relaxed);
  }

  struct Snapshot {
    std::array<uint64_t, kBuckets> counts{};  // per bucket, not cumulative
    uint64_t count = 0;
    double sum_seconds = 0;
  };
  Snapshot Read() const {
    Snapshot s;
    for (size_t i = 0; i < kBuckets; ++i) {
      s.counts[i] = counts_[i].load(std::memory_order_relaxed);
      s.count += s.counts[i];
    }
    s.sum_seconds = sum_ns_.load(std::memory_order_relaxed) / 1e9;
    return s;
  }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<int64_t> sum_ns_{0};
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_METRICS_LATENCY_HISTOGRAM_H_
