#ifndef JITCACHE_SERVER_SERVICE_COUNTERS_H_
#define JITCACHE_SERVER_SERVICE_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// What the service has done since it started. Lock-free; any thread.
struct ServiceCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> joins{0};
  std::atomic<uint64_t> compile_errors{0};
  std::atomic<uint64_t> compiles{0};
  std::atomic<uint64_t> link_requests{0};
  std::atomic<uint64_t> link_errors{0};
  std::atomic<int64_t> compile_us_spent{0};
  std::atomic<int64_t> compile_us_saved{0};
  std::atomic<uint64_t> invalid_argument{0};
  std::atomic<uint64_t> queue_full{0};
  std::atomic<uint64_t> deadline_exceeded{0};
  std::atomic<uint64_t> cancelled{0};
  std::atomic<uint64_t> unavailable{0};
  std::atomic<uint64_t> not_found{0};
  std::atomic<uint64_t> data_loss{0};
  std::atomic<uint64_t> internal{0};

  void CountOutcome(v1::Outcome outcome) {
    if (outcome == v1::OUTCOME_COMPILE_ERROR) ++compile_errors;
    if (outcome == v1::OUTCOME_LINK_ERROR) ++link_errors;
  }

  // Counts an error answer under its reason.
  void Rejected(absl::StatusCode code) {
    switch (code) {
      case absl::StatusCode::kInvalidArgument:
        ++invalid_argument;
        break;
      case absl::StatusCode::kResourceExhausted:
        ++queue_full;
        break;
      case absl::StatusCode::kDeadlineExceeded:
        ++deadline_exceeded;
        break;
      case absl::StatusCode::kCancelled:
        ++cancelled;
        break;
      case absl::StatusCode::kUnavailable:
        ++unavailable;
        break;
      case absl::StatusCode::kNotFound:
        ++not_found;
        break;
      case absl::StatusCode::kDataLoss:
        ++data_loss;
        break;
      default:
        ++internal;
        break;
    }
  }

  void Fill(v1::StatsResponse* out) const {
    out->set_requests(requests);
    out->set_hits(hits);
    out->set_misses(misses);
    out->set_joins(joins);
    out->set_compile_errors(compile_errors);
    out->set_compiles(compiles);
    out->set_link_requests(link_requests);
    out->set_link_errors(link_errors);
    out->set_compile_seconds_spent(compile_us_spent / 1e6);
    out->set_compile_seconds_saved(compile_us_saved / 1e6);
    auto& rejected = *out->mutable_rejected();
    rejected["invalid_argument"] = invalid_argument;
    rejected["queue_full"] = queue_full;
    rejected["deadline_exceeded"] = deadline_exceeded;
    rejected["cancelled"] = cancelled;
    rejected["unavailable"] = unavailable;
    rejected["not_found"] = not_found;
    rejected["data_loss"] = data_loss;
    rejected["internal"] = internal;
  }
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_SERVICE_COUNTERS_H_
