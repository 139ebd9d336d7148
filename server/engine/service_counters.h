#ifndef JITCACHE_SERVER_ENGINE_SERVICE_COUNTERS_H_
#define JITCACHE_SERVER_ENGINE_SERVICE_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <iterator>

#include "absl/status/status.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/metrics/latency_histogram.h"

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
  std::atomic<uint64_t> ptxas_requests{0};
  std::atomic<uint64_t> nvvm_requests{0};
  std::atomic<uint64_t> records_disproved{0};
  std::atomic<uint64_t> disproofs_refuted{0};
  std::atomic<uint64_t> place_proofs{0};  // compiles run again elsewhere
  std::atomic<uint64_t> place_shared{0};  // answers every place shares
  std::atomic<uint64_t> place_kept{0};    // answers kept for their place
  // Of those, answers kept for the program's name, shared by every place.
  std::atomic<uint64_t> place_name_kept{0};
  // Leaders answered when their compile ended, before their proof did.
  std::atomic<uint64_t> place_answered_before_proof{0};
  // A gauge: proofs started whose verdict is not yet kept (never zeroed).
  // A proof of a compile that failed has none to keep: it leaves the gauge
  // when its compile ends, though its own compile may still be running.
  std::atomic<uint64_t> place_proofs_running{0};
  std::atomic<uint64_t> hot_hits{0};        // hits answered from HotAnswers
  std::atomic<uint64_t> socket_hits{0};     // on the framed socket
  std::atomic<uint64_t> shared_answers{0};  // of those, as sealed files
  std::atomic<uint64_t> socket_batches{0};  // of the framed socket's requests
  std::atomic<int64_t> compile_us_spent{0};
  std::atomic<int64_t> compile_us_saved{0};
  // Error answers by reason; kReasons names them in Stats.
  static constexpr struct {
    absl::StatusCode code;
    const char* name;
  } kReasons[] = {
      {absl::StatusCode::kInvalidArgument, "invalid_argument"},
      {absl::StatusCode::kResourceExhausted, "queue_full"},
      {absl::StatusCode::kDeadlineExceeded, "deadline_exceeded"},
      {absl::StatusCode::kCancelled, "cancelled"},
      {absl::StatusCode::kUnavailable, "unavailable"},
      {absl::StatusCode::kNotFound, "not_found"},
      {absl::StatusCode::kDataLoss, "data_loss"},
      {absl::StatusCode::kPermissionDenied, "permission_denied"},
      {absl::StatusCode::kOutOfRange, "no_such_object"},
      {absl::StatusCode::kInternal, "internal"},  // and every other code
  };
  static constexpr size_t kReasonCount = std::size(kReasons);
  std::array<std::atomic<uint64_t>, kReasonCount> rejected{};
  // Request to answer, seen by the daemon: answered from the store (either
  // socket), and answered after waiting for a compile (led or joined).
  LatencyHistogram hit_latency;
  LatencyHistogram miss_latency;
  // Compiles and links that ran, successful or not.
  LatencyHistogram compile_time;

  // A request answered from the store.
  void CountHit(int64_t compile_time_us, v1::Outcome outcome) {
    ++hits;
    compile_us_saved += compile_time_us;
    CountOutcome(outcome);
  }

  void CountOutcome(v1::Outcome outcome) {
    if (outcome == v1::OUTCOME_COMPILE_ERROR) ++compile_errors;
    if (outcome == v1::OUTCOME_LINK_ERROR) ++link_errors;
  }

  // Counts an error answer under its reason.
  void Rejected(absl::StatusCode code) {
    size_t i = kReasonCount - 1;  // "internal" unless named
    for (size_t r = 0; r < kReasonCount; ++r) {
      if (kReasons[r].code == code) i = r;
    }
    ++rejected[i];
  }

  // Back to zero (an administrator's `jitcache stats --zero`). The
  // histograms are not: Prometheus reads them as ever-growing.
  void Zero() {
    for (auto* c : {&requests,
                    &hits,
                    &misses,
                    &joins,
                    &compile_errors,
                    &compiles,
                    &link_requests,
                    &link_errors,
                    &ptxas_requests,
                    &nvvm_requests,
                    &records_disproved,
                    &disproofs_refuted,
                    &hot_hits,
                    &socket_hits,
                    &shared_answers,
                    &socket_batches,
                    &place_proofs,
                    &place_shared,
                    &place_kept,
                    &place_name_kept,
                    &place_answered_before_proof}) {
      c->store(0);
    }
    compile_us_spent = 0;
    compile_us_saved = 0;
    for (auto& r : rejected) r.store(0);
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
    out->set_ptxas_requests(ptxas_requests);
    out->set_nvvm_requests(nvvm_requests);
    out->set_records_disproved(records_disproved);
    out->set_disproofs_refuted(disproofs_refuted);
    out->set_place_proofs(place_proofs);
    out->set_place_shared(place_shared);
    out->set_place_kept(place_kept);
    out->set_place_name_kept(place_name_kept);
    out->set_place_answered_before_proof(place_answered_before_proof);
    out->set_place_proofs_running(place_proofs_running);
    out->set_hot_hits(hot_hits);
    out->set_socket_hits(socket_hits);
    out->set_shared_answers(shared_answers);
    out->set_socket_batches(socket_batches);
    out->set_compile_seconds_spent(compile_us_spent / 1e6);
    out->set_compile_seconds_saved(compile_us_saved / 1e6);
    for (size_t r = 0; r < kReasonCount; ++r) {
      (*out->mutable_rejected())[kReasons[r].name] = rejected[r];
    }
  }
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_ENGINE_SERVICE_COUNTERS_H_
