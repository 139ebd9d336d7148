#ifndef JITCACHE_SERVER_RPC_REQUEST_COUNTING_H_
#define JITCACHE_SERVER_RPC_REQUEST_COUNTING_H_

#include <sys/types.h>

#include "absl/time/time.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/engine/hot_answers.h"
#include "server/engine/service_counters.h"
#include "server/engine/user_stats.h"

namespace jitcache {

// How both doors count what they answer, for the daemon and for each user:
// one place, so that a request counts the same whichever door it came by.
// Thread-safety: every method from any thread; `counters` and `users`
// outlive it.
class RequestCounting {
 public:
  RequestCounting(ServiceCounters* counters, UserStats* users)
      : counters_(counters), users_(users) {}

  // A request from `uid` arrived; its user's counters are returned.
  UserStats::Counters& Request(uid_t uid);
  // A request the caller is asked to send again with what it left out: it
  // is counted once, when it comes again.
  void Resent(UserStats::Counters& user);
  // A request that arrived at `start` was answered from memory or the
  // store.
  void Hit(UserStats::Counters& user, const HotAnswer& answer,
           absl::Time start);
  // ... by a run (`response` says whether it led it or joined it).
  void Built(UserStats::Counters& user, const v1::CompileResponse& response,
             absl::Time start);
  // ... with an error.
  void Rejected(UserStats::Counters& user, absl::StatusCode code);

 private:
  ServiceCounters* const counters_;
  UserStats* const users_;
};

}  // namespace jitcache

#endif  // JITCACHE_SERVER_RPC_REQUEST_COUNTING_H_
