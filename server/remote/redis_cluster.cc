#include "server/remote/redis_cluster.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/absl_view.h"
#include "common/log.h"

namespace jitcache {
namespace {

constexpr int kMostHops = 5;

// The cluster is changing its mind: the command may succeed once it has.
bool ClusterMoving(absl::string_view error) {
  for (absl::string_view prefix :
       {"TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "LOADING", "READONLY"}) {
    if (absl::StartsWith(error, prefix)) return true;
  }
  return false;
}

RedisLinkOptions Readonly(RedisLinkOptions options) {
  options.readonly = true;
  return options;
}

absl::string_view StringOf(const redisReply* r) {
  return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_ERROR ||
                 r->type == REDIS_REPLY_STATUS
             ? absl::string_view(r->str, r->len)
             : absl::string_view();
}

}  // namespace

RedisCluster::RedisCluster(std::shared_ptr<RedisClusterMap> map,
                           RedisLinkOptions options, RedisCounters* counters,
                           bool replica_reads)
    : map_(std::move(map)),
      options_(std::move(options)),
      reader_options_(Readonly(options_)),
      counters_(counters),
      replica_reads_(replica_reads) {}

RedisCluster::~RedisCluster() = default;

RedisCluster::Node& RedisCluster::NodeNumbered(int number, bool reader) {
  absl::MutexLock lock(&nodes_mu_);
  std::vector<std::unique_ptr<Node>>& nodes = reader ? readers_ : nodes_;
  while (static_cast<int>(nodes.size()) <= number) {
    nodes.push_back(
        std::make_unique<Node>(map_->EndpointOf(static_cast<int>(nodes.size())),
                               reader ? reader_options_ : options_));
  }
  return *nodes[number];
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
  // With no map yet (the first requests after start), wait for another
  // client's read, one timeout at most, rather than fail for want of it.
  if (!map_->StartRead(options_.timeout)) return;
  const std::string_view argv[] = {"CLUSTER", "SLOTS"};
  // A node that is not in the cluster yet (or was reset) knows no slots, or
  // only some: the next one is asked; the fullest map serves if none knows
  // them all (and is read again soon).
  RedisClusterMap::Slots best;
  best.fill(-1);
  RedisClusterMap::Replicas best_replicas;
  int best_covered = 0;
  for (int number : map_->Candidates()) {
    Node& asked = NodeNumbered(number);
    std::string why;
    RedisReply reply = Ask(asked, argv, false, &why);
    if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY) continue;
    RedisClusterMap::Slots slots;
    slots.fill(-1);
    RedisClusterMap::Replicas replicas;
    if (!ReadSlotMap(*reply, asked.endpoint.host, slots, replicas)) continue;
    const int covered = static_cast<int>(std::count_if(
        slots.begin(), slots.end(), [](int n) { return n >= 0; }));
    if (covered > best_covered) {
      best = slots;
      best_replicas = std::move(replicas);
      best_covered = covered;
    }
    if (covered == kRedisSlots) break;
  }
  if (best_covered > 0) ++counters_->refreshes;
  map_->FinishRead(best, best_covered, std::move(best_replicas));
}

bool RedisCluster::ReadSlotMap(const redisReply& reply,
                               const std::string& asked_host,
                               RedisClusterMap::Slots& slots,
                               RedisClusterMap::Replicas& replicas) {
  // A node as CLUSTER SLOTS names it: [host, port, id, ...]. No host (""
  // or "?", or NIL): the node asked knows it by the address it was asked
  // at.
  const auto endpoint_of =
      [&](const redisReply* node) -> std::optional<RedisEndpoint> {
    if (node->type != REDIS_REPLY_ARRAY || node->elements < 2) {
      return std::nullopt;
    }
    const redisReply* host = node->element[0];
    const redisReply* port = node->element[1];
    if ((host->type != REDIS_REPLY_STRING && host->type != REDIS_REPLY_NIL) ||
        port->type != REDIS_REPLY_INTEGER || port->integer < 1 ||
        port->integer > 65535) {
      return std::nullopt;
    }
    RedisEndpoint endpoint;
    endpoint.host = std::string(StringOf(host));
    endpoint.port = static_cast<int>(port->integer);
    if (endpoint.host.empty() || endpoint.host == "?") {
      endpoint.host = asked_host;
    }
    return endpoint;
  };
  // The whole reply is checked before any node in it becomes known: the
  // map's list of nodes is never cut back.
  struct Range {
    long long first, last;
    RedisEndpoint master;
    std::vector<RedisEndpoint> replicas;
  };
  std::vector<Range> ranges;
  for (size_t i = 0; i < reply.elements; ++i) {
    const redisReply* range = reply.element[i];
    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
        range->element[0]->type != REDIS_REPLY_INTEGER ||
        range->element[1]->type != REDIS_REPLY_INTEGER) {
      return false;
    }
    std::optional<RedisEndpoint> master = endpoint_of(range->element[2]);
    const long long first = range->element[0]->integer;
    const long long last = range->element[1]->integer;
    if (!master.has_value() || first < 0 || last >= kRedisSlots ||
        first > last) {
      return false;
    }
    Range read{first, last, *std::move(master), {}};
    // A replica it cannot read is left out (reads go to the master), not
    // the map.
    for (size_t r = 3; r < range->elements; ++r) {
      std::optional<RedisEndpoint> replica = endpoint_of(range->element[r]);
      if (replica.has_value()) read.replicas.push_back(*std::move(replica));
    }
    ranges.push_back(std::move(read));
  }
  for (const Range& range : ranges) {
    const int master = map_->NumberOf(range.master);
    for (long long s = range.first; s <= range.last; ++s) slots[s] = master;
    // Replicas are known too: one of them may be the master the next map
    // names, after its own master and the seeds are gone.
    for (const RedisEndpoint& endpoint : range.replicas) {
      const int replica = map_->NumberOf(endpoint);
      if (static_cast<int>(replicas.size()) <= master) {
        replicas.resize(master + 1);
      }
      std::vector<int>& of = replicas[master];
      if (std::find(of.begin(), of.end(), replica) == of.end()) {
        of.push_back(replica);
      }
    }
  }
  return true;
}

RedisReply RedisCluster::GetFromReplica(std::string_view key, bool* asked) {
  *asked = false;
  if (!replica_reads_) return nullptr;
  MaybeRefresh();
  const std::vector<int> replicas =
      map_->ReplicasOf(map_->MasterOf(RedisKeySlot(AbslView(key))));
  if (replicas.empty()) return nullptr;
  const int replica = replicas[next_replica_.fetch_add(1) % replicas.size()];
  const std::string_view argv[] = {"GET", key};
  std::string why;
  *asked = true;
  RedisReply reply =
      Ask(NodeNumbered(replica, /*reader=*/true), argv, false, &why);
  if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
    // No longer a replica of that slot's master: the map is read again. A
    // replica away, or one that answers LOADING or MASTERDOWN, is not
    // news the map would bring (it backs off, or the map's age brings
    // what changed).
    if (reply != nullptr && absl::StartsWith(StringOf(reply.get()), "MOVED ")) {
      map_->RefreshSoon();
    }
    return nullptr;
  }
  return reply;
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
  const int master = map_->MasterOf(slot);
  if (master < 0) {
    map_->RefreshSoon();
    return Fail(absl::StrCat("no node is known to serve slot ", slot));
  }
  Node* node = &NodeNumbered(master);
  bool asking = false;
  for (int hop = 0; hop < kMostHops; ++hop) {
    std::string why;
    RedisReply reply = Ask(*node, argv, asking, &why);
    if (reply == nullptr) {
      map_->RefreshSoon();
      return Fail(why);
    }
    if (reply->type != REDIS_REPLY_ERROR) {
      Answered();
      return reply;
    }
    const absl::string_view error = StringOf(reply.get());
    const bool moved = absl::StartsWith(error, "MOVED ");
    if (!moved && !absl::StartsWith(error, "ASK ")) {
      if (ClusterMoving(error)) map_->RefreshSoon();
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
    const int target = map_->NumberOf(*there);
    if (moved) map_->Moved(slot, target);
    asking = !moved;
    node = &NodeNumbered(target);
  }
  return Fail("redirected too many times");
}

}  // namespace jitcache
