#include "server/rpc/request_counting.h"

#include "absl/time/clock.h"

namespace jitcache {

UserStats::Counters& RequestCounting::Request(uid_t uid) {
  ++counters_->requests;
  UserStats::Counters& user = users_->For(uid);
  ++user.requests;
  return user;
}

void RequestCounting::Resent(UserStats::Counters& user) {
  --counters_->requests;
  --user.requests;
}

void RequestCounting::Hit(UserStats::Counters& user, const HotAnswer& answer,
                          absl::Time start) {
  counters_->CountHit(answer.compile_time_us, answer.outcome);
  ++user.hits;
  counters_->hit_latency.Observe(absl::Now() - start);
}

void RequestCounting::Built(UserStats::Counters& user,
                            const v1::CompileResponse& response,
                            absl::Time start) {
  if (response.served() == v1::SERVED_MISS) {
    ++counters_->misses;
    ++user.misses;
  } else {
    ++counters_->joins;
    ++user.joins;
    counters_->compile_us_saved += response.compile_time_us();
  }
  counters_->CountOutcome(response.outcome());
  counters_->miss_latency.Observe(absl::Now() - start);
}

void RequestCounting::Rejected(UserStats::Counters& user,
                               absl::StatusCode code) {
  counters_->Rejected(code);
  ++user.rejected;
}

}  // namespace jitcache
