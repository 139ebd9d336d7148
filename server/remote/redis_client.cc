#include "server/remote/redis_client.h"

#include <hiredis/hiredis.h>

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "server/remote/redis_cluster.h"
#include "server/remote/redis_cluster_map.h"

namespace jitcache {
namespace {

// One server, one connection.
class SingleRedis final : public RedisClient {
 public:
  SingleRedis(RedisEndpoint endpoint, const RedisLinkOptions& options,
              RedisCounters* counters)
      : link_(std::move(endpoint), options), counters_(counters) {}

  RedisReply Run(std::string_view /*key*/,
                 std::vector<std::string_view> argv) override {
    absl::MutexLock lock(&mu_);
    if (!link_.open() && absl::Now() < retry_at_) {
      ++counters_->errors;
      return nullptr;
    }
    std::string error;
    RedisReply reply = link_.Command(argv, &error);
    if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
      Fail(reply == nullptr ? error : std::string(reply->str, reply->len));
      return nullptr;
    }
    if (down_) {
      JITCACHE_LOG(Info) << "remote tier: connected again ("
                         << link_.endpoint().Name() << ")";
      down_ = false;
    }
    backoff_ = absl::Milliseconds(100);
    return reply;
  }

 private:
  void Fail(const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++counters_->errors;
    if (!down_) {
      JITCACHE_LOG(Warning) << "remote tier unusable (" << why
                            << "); serving and compiling locally, retrying "
                               "with backoff";
      down_ = true;
    }
    link_.Close();
    retry_at_ = absl::Now() + backoff_;
    backoff_ = std::min(backoff_ * 2, absl::Seconds(5));
  }

  absl::Mutex mu_;
  RedisLink link_ ABSL_GUARDED_BY(mu_);
  RedisCounters* const counters_;
  absl::Time retry_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::Milliseconds(100);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

std::vector<std::unique_ptr<RedisClient>> MakeRedisClients(
    const RedisTarget& target, const RedisLinkOptions& options,
    RedisCounters* counters, int count, bool replica_reads) {
  std::shared_ptr<RedisClusterMap> map;
  if (target.cluster) {
    map = std::make_shared<RedisClusterMap>(target.endpoints);
  }
  std::vector<std::unique_ptr<RedisClient>> clients;
  for (int i = 0; i < count; ++i) {
    if (map != nullptr) {
      clients.push_back(std::make_unique<RedisCluster>(map, options, counters,
                                                       replica_reads));
    } else {
      clients.push_back(std::make_unique<SingleRedis>(target.endpoints.front(),
                                                      options, counters));
    }
  }
  return clients;
}

}  // namespace jitcache
