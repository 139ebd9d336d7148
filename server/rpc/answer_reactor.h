#ifndef JITCACHE_SERVER_RPC_ANSWER_REACTOR_H_
#define JITCACHE_SERVER_RPC_ANSWER_REACTOR_H_

#include <grpcpp/support/server_callback.h>

#include <atomic>
#include <memory>

#include "absl/time/clock.h"
#include "server/engine/service_counters.h"
#include "server/engine/user_stats.h"

namespace jitcache {

// A Compile or Link call that may be finished from two places: by the end of
// the build it waits on, or by the client's cancellation. Whoever comes first
// finishes it; the flag outlives the reactor, so a late completion never
// touches a reactor that is gone. Deletes itself when gRPC is done with it.
class AnswerReactor final : public grpc::ServerUnaryReactor {
 public:
  // `user`: the requester's counters; both outlive the reactor.
  AnswerReactor(ServiceCounters* counters, UserStats::Counters* user)
      : counters_(counters),
        user_(user),
        finished_(std::make_shared<std::atomic<bool>>(false)) {}

  // Finishes the RPC unless someone else did; an error is counted first, so
  // that a client never sees its answer before the counters do.
  static void FinishOnce(AnswerReactor* reactor,
                         const std::shared_ptr<std::atomic<bool>>& finished,
                         const grpc::Status& status) {
    if (finished->exchange(true)) return;
    reactor->FinishClaimed(status);
  }
  void FinishOnce(const grpc::Status& status) {
    FinishOnce(this, finished_, status);
  }
  // Finishes a request that the client is told to send again, differently
  // (an included file's contents): it is counted once, when sent again.
  void FinishToResend(const grpc::Status& status) {
    if (finished_->exchange(true)) return;
    FinishClaimedToResend(status);
  }

  // For whoever already took the finish (finished() set by them): the
  // reactor stays until this is called, whatever the client does.
  void FinishClaimed(const grpc::Status& status) {
    if (!status.ok()) {
      counters_->Rejected(static_cast<absl::StatusCode>(status.error_code()));
      ++user_->rejected;
    }
    Finish(status);
  }
  void FinishClaimedToResend(const grpc::Status& status) {
    --counters_->requests;
    --user_->requests;
    Finish(status);
  }

  void OnCancel() override { FinishOnce(grpc::Status::CANCELLED); }
  void OnDone() override { delete this; }

  const std::shared_ptr<std::atomic<bool>>& finished() const {
    return finished_;
  }
  UserStats::Counters& user() const { return *user_; }
  // When the request arrived (for the latency histograms).
  absl::Time start() const { return start_; }

 private:
  ServiceCounters* counters_;
  UserStats::Counters* user_;
  const absl::Time start_ = absl::Now();
  std::shared_ptr<std::atomic<bool>> finished_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_ANSWER_REACTOR_H_
