#include "server/remote/redis_cluster.h"

#include <hiredis/hiredis.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/absl_view.h"
#include "common/log.h"

namespace jitcache {
namespace {

constexpr int kMostHops = 5;
constexpr absl::Duration kLeastBetweenRefreshes = absl::Milliseconds(100);

// The cluster is changing its mind: the command may succeed once it has.
bool ClusterMoving(absl::string_view error) {
  for (absl::string_view prefix :
       {"TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "LOADING", "READONLY"}) {
    if (absl::StartsWith(error, prefix)) return true;
  }
  return false;
}

absl::string_view StringOf(const redisReply* r) {
  return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_ERROR ||
                 r->type == REDIS_REPLY_STATUS
             ? absl::string_view(r->str, r->len)
             : absl::string_view();
}

}  // namespace

RedisCluster::RedisCluster(std::vector<RedisEndpoint> seeds,
                           RedisLinkOptions options, RedisCounters* counters)
    : options_(std::move(options)), counters_(counters) {
  for (const RedisEndpoint& seed : seeds) NodeAt(seed);
}

RedisCluster::~RedisCluster() = default;

RedisCluster::Node* RedisCluster::NodeAt(const RedisEndpoint& endpoint) {
  absl::MutexLock lock(&mu_);
  for (const std::unique_ptr<Node>& n : nodes_) {
    if (n->endpoint == endpoint) return n.get();
  }
  nodes_.push_back(std::make_unique<Node>(endpoint, options_));
  return nodes_.back().get();
}

RedisCluster::Node* RedisCluster::NodeForSlot(int slot) {
  absl::MutexLock lock(&mu_);
  return slots_[slot];
}

void RedisCluster::RefreshSoon() {
  absl::MutexLock lock(&mu_);
  refresh_due_ = true;
}

RedisReply RedisCluster::Ask(Node& node, std::span<const std::string_view> argv,
                             bool asking, std::string* why) {
  absl::MutexLock lock(&node.mu);
  if (!node.link.open() && absl::Now() < node.retry_at) {
    *why = absl::StrCat(node.endpoint.Name(),
                        " failed lately; not asked again yet");
    return nullptr;
  }
  RedisReply reply;
  if (asking) {
    const std::string_view asking_argv[] = {"ASKING"};
    reply = node.link.Command(asking_argv, why);
  }
  if (!asking || reply != nullptr) reply = node.link.Command(argv, why);
  if (reply == nullptr) {
    node.link.Close();
    node.retry_at = absl::Now() + node.backoff;
    node.backoff = std::min(node.backoff * 2, absl::Seconds(5));
    return nullptr;
  }
  node.backoff = absl::Milliseconds(100);
  return reply;
}

void RedisCluster::MaybeRefresh() {
  const absl::Time asked = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    if (!refresh_due_) return;
    if (refreshing_) {
      // Another thread reads it now. With no map yet (the first requests
      // after start), wait for that read, one timeout at most, rather than
      // fail for want of it; with one, go on with it.
      if (!known_) {
        auto over = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !refreshing_;
        };
        mu_.AwaitWithDeadline(absl::Condition(&over), asked + options_.timeout);
      }
      return;
    }
    if (asked - last_refresh_ < kLeastBetweenRefreshes) return;
    refreshing_ = true;
  }
  Refresh();
  absl::MutexLock lock(&mu_);
  refreshing_ = false;
}

bool RedisCluster::Refresh() {
  std::vector<Node*> candidates;
  {
    absl::MutexLock lock(&mu_);
    last_refresh_ = absl::Now();
    // The masters the map names first, then every node known, seeds too.
    for (Node* n : slots_) {
      if (n != nullptr && std::find(candidates.begin(), candidates.end(), n) ==
                              candidates.end()) {
        candidates.push_back(n);
      }
    }
    for (const std::unique_ptr<Node>& n : nodes_) {
      if (std::find(candidates.begin(), candidates.end(), n.get()) ==
          candidates.end()) {
        candidates.push_back(n.get());
      }
    }
  }
  const std::string_view argv[] = {"CLUSTER", "SLOTS"};
  // A node that is not in the cluster yet (or was reset) knows no slots, or
  // only some: the next one is asked; the fullest map serves if none knows
  // them all (and is read again soon).
  std::array<Node*, kRedisSlots> best = {};
  int best_covered = 0;
  for (Node* asked : candidates) {
    std::string why;
    RedisReply reply = Ask(*asked, argv, false, &why);
    if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY) continue;
    std::array<Node*, kRedisSlots> map = {};
    if (!ReadSlotMap(*reply, asked->endpoint.host, map)) continue;
    const int covered = static_cast<int>(std::count_if(
        map.begin(), map.end(), [](const Node* n) { return n != nullptr; }));
    if (covered > best_covered) {
      best = map;
      best_covered = covered;
    }
    if (covered == kRedisSlots) break;
  }
  if (best_covered == 0) return false;
  ++counters_->refreshes;
  absl::MutexLock lock(&mu_);
  slots_ = best;
  refresh_due_ = best_covered < kRedisSlots;
  known_ = true;
  return !refresh_due_;
}

bool RedisCluster::ReadSlotMap(const redisReply& reply,
                               const std::string& asked_host,
                               std::array<Node*, kRedisSlots>& map) {
  for (size_t i = 0; i < reply.elements; ++i) {
    const redisReply* range = reply.element[i];
    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
        range->element[0]->type != REDIS_REPLY_INTEGER ||
        range->element[1]->type != REDIS_REPLY_INTEGER ||
        range->element[2]->type != REDIS_REPLY_ARRAY ||
        range->element[2]->elements < 2 ||
        range->element[2]->element[1]->type != REDIS_REPLY_INTEGER) {
      return false;
    }
    const long long first = range->element[0]->integer;
    const long long last = range->element[1]->integer;
    if (first < 0 || last >= kRedisSlots || first > last) return false;
    const redisReply* master = range->element[2];
    RedisEndpoint endpoint;
    endpoint.host = std::string(StringOf(master->element[0]));
    endpoint.port = static_cast<int>(master->element[1]->integer);
    // No name ("" or "?"): the node asked knows it by the address it was
    // asked at.
    if (endpoint.host.empty() || endpoint.host == "?") {
      endpoint.host = asked_host;
    }
    Node* node = NodeAt(endpoint);
    for (long long s = first; s <= last; ++s) map[s] = node;
  }
  return true;
}

RedisReply RedisCluster::Fail(const std::string& why) {
  ++counters_->errors;
  absl::MutexLock lock(&log_mu_);
  if (!down_) {
    JITCACHE_LOG(Warning) << "remote tier (cluster) unusable for now (" << why
                          << "); serving and compiling locally, following "
                             "the cluster as it settles";
    down_ = true;
  }
  return nullptr;
}

void RedisCluster::Answered() {
  absl::MutexLock lock(&log_mu_);
  if (down_) {
    JITCACHE_LOG(Info) << "remote tier (cluster): answering again";
    down_ = false;
  }
}

RedisReply RedisCluster::Run(std::string_view key,
                             std::vector<std::string_view> argv) {
  MaybeRefresh();
  const int slot = RedisKeySlot(AbslView(key));
  Node* node = NodeForSlot(slot);
  if (node == nullptr) {
    RefreshSoon();
    return Fail(absl::StrCat("no node is known to serve slot ", slot));
  }
  bool asking = false;
  for (int hop = 0; hop < kMostHops; ++hop) {
    std::string why;
    RedisReply reply = Ask(*node, argv, asking, &why);
    if (reply == nullptr) {
      RefreshSoon();
      return Fail(why);
    }
    if (reply->type != REDIS_REPLY_ERROR) {
      Answered();
      return reply;
    }
    const absl::string_view error = StringOf(reply.get());
    const bool moved = absl::StartsWith(error, "MOVED ");
    if (!moved && !absl::StartsWith(error, "ASK ")) {
      if (ClusterMoving(error)) RefreshSoon();
      return Fail(std::string(error));
    }
    // "MOVED 3999 127.0.0.1:6381": the slot, and where it is now.
    const std::vector<absl::string_view> words = absl::StrSplit(error, ' ');
    absl::StatusOr<RedisEndpoint> there =
        words.size() == 3 ? ParseHostPort(words[2])
                          : absl::InvalidArgumentError("no address");
    if (!there.ok() && words.size() == 3 && absl::StartsWith(words[2], ":")) {
      there = ParseHostPort(absl::StrCat(node->endpoint.host, words[2]));
    }
    if (!there.ok()) return Fail(absl::StrCat("unreadable redirect: ", error));
    ++counters_->redirects;
    Node* target = NodeAt(*there);
    if (moved) {
      absl::MutexLock lock(&mu_);
      slots_[slot] = target;
      refresh_due_ = true;
    }
    asking = !moved;
    node = target;
  }
  return Fail("redirected too many times");
}

}  // namespace jitcache
