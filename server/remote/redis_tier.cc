#include "server/remote/redis_tier.h"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/little_endian.h"
#include "common/log.h"
#include "server/remote/remote_keys.h"

namespace jitcache {
namespace {

constexpr char kMagic[] = "JCR2";

}  // namespace

namespace {

constexpr size_t kMacSize = 32;

}  // namespace

std::string FrameRemoteValue(absl::string_view name, absl::string_view payload,
                             absl::string_view key) {
  std::string out(kMagic, 4);
  le::Append<uint64_t>(&out, payload.size());
  out.append(payload.data(), payload.size());
  out += RemoteMac(key, {"jitcache entry", name, payload});
  return out;
}

std::optional<std::string> UnframeRemoteValue(
    absl::string_view name, absl::string_view value,
    const std::vector<std::string>& keys) {
  constexpr size_t kOverhead = 4 + 8 + kMacSize;
  if (value.size() < kOverhead || value.substr(0, 4) != kMagic) {
    return std::nullopt;
  }
  const uint64_t n = le::Get<uint64_t>(value.data() + 4);
  if (n != value.size() - kOverhead) return std::nullopt;
  const absl::string_view payload = value.substr(12, n);
  if (!RemoteMacMatches(value.substr(12 + n), keys,
                        {"jitcache entry", name, payload})) {
    return std::nullopt;
  }
  return std::string(payload);
}

absl::StatusOr<std::unique_ptr<RedisTier>> RedisTier::Create(
    RemoteOptions options) {
  absl::StatusOr<RedisTarget> target = ParseRedisUrl(options.url);
  if (!target.ok()) return target.status();
  if (options.keys.empty()) {
    return absl::InvalidArgumentError(
        "--remote needs --remote_key_file: the team key that signs what "
        "daemons write to Redis, so that no one else can make a node serve "
        "their kernel");
  }
  if (options.replica_reads && !target->cluster) {
    return absl::InvalidArgumentError(
        absl::StrCat("--remote_replica_reads reads from a Redis Cluster's "
                     "replicas, but --remote=",
                     options.url,
                     " is one server: use redis-cluster:// or "
                     "redis-cluster+tls://"));
  }
  RedisLinkOptions link;
  link.timeout = options.timeout;
  link.user = options.user;
  link.password = options.password;
  link.db = target->db;
  link.reply_buffer_kept = options.reply_buffer_kept;
  if (target->tls) {
    absl::StatusOr<std::shared_ptr<const TlsContext>> tls =
        TlsContext::Create(options.tls);
    if (!tls.ok()) return tls.status();
    link.tls = *std::move(tls);
  } else if (!options.tls.ca_file.empty() || !options.tls.cert_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--remote=", options.url,
                     " is not TLS, but TLS files are given: use rediss:// or "
                     "redis-cluster+tls://"));
  }
  auto tier = std::unique_ptr<RedisTier>(new RedisTier(std::move(options)));
  tier->cluster_ = target->cluster;
  // Reads are not queued behind large writes: two clients, each with its
  // own connections (and, on a cluster, one map).
  std::vector<std::unique_ptr<RedisClient>> clients = MakeRedisClients(
      *target, link, &tier->counters_, 2, tier->options_.replica_reads);
  tier->foreground_ = std::move(clients[0]);
  tier->background_ = std::move(clients[1]);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  tier->node_ = absl::StrCat(host, ":", getpid(), ":", std::random_device()());
  tier->thread_ = std::thread([t = tier.get()] { t->Background(); });
  return tier;
}

RedisTier::RedisTier(RemoteOptions options) : options_(std::move(options)) {}

RedisTier::~RedisTier() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

// On a cluster the key's digest is a hash tag: an entry and its lease live
// in one slot, on one node, moved together.
std::string RedisTier::EntryKey(const Digest& key) const {
  return cluster_ ? absl::StrCat("jitcache:v2:{", key.Hex(), "}:entry")
                  : absl::StrCat("jitcache:v2:entry:", key.Hex());
}
std::string RedisTier::LeaseKey(const Digest& key) const {
  return cluster_ ? absl::StrCat("jitcache:v2:{", key.Hex(), "}:lease")
                  : absl::StrCat("jitcache:v2:lease:", key.Hex());
}

std::string RedisTier::LeaseValue(const std::string& name,
                                  absl::Time expiry) const {
  const std::string until = absl::StrCat(absl::ToUnixMillis(expiry));
  return absl::StrCat(
      node_, "|", until, "|",
      absl::BytesToHexString(RemoteMac(
          options_.keys.front(), {"jitcache lease", name, node_, until})));
}

bool RedisTier::LeaseValid(const std::string& name,
                           absl::string_view value) const {
  const size_t mac_at = value.rfind('|');
  if (mac_at == absl::string_view::npos || mac_at == 0) return false;
  const size_t until_at = value.rfind('|', mac_at - 1);
  if (until_at == absl::string_view::npos) return false;
  const absl::string_view node = value.substr(0, until_at);
  const absl::string_view until =
      value.substr(until_at + 1, mac_at - until_at - 1);
  int64_t until_ms = 0;
  if (!absl::SimpleAtoi(until, &until_ms)) return false;
  const std::string mac = absl::HexStringToBytes(value.substr(mac_at + 1));
  if (!RemoteMacMatches(mac, options_.keys,
                        {"jitcache lease", name, node, until})) {
    return false;
  }
  // Expired, or further away than one lifetime (and a little clock skew):
  // no longer a reason to wait.
  const absl::Time expiry = absl::FromUnixMillis(until_ms);
  const absl::Time now = absl::Now();
  return expiry > now && expiry <= now + options_.lease_ttl + absl::Seconds(5);
}

std::optional<std::string> RedisTier::ConfirmedByMaster(
    const std::string& name, const redisReply* from_replica,
    bool* master_away) {
  *master_away = false;
  if (from_replica == nullptr || from_replica->type != REDIS_REPLY_STRING) {
    return std::nullopt;
  }
  const absl::string_view value(from_replica->str, from_replica->len);
  std::optional<std::string> payload =
      UnframeRemoteValue(name, value, options_.keys);
  if (!payload.has_value()) return std::nullopt;
  // The value's MAC (its last bytes) against the master's: equal, the
  // master holds a value with this MAC, which covers the name and the
  // payload (a writer to Redis could put an old one back there as well as
  // here); anything else, and the master's own answer decides.
  const std::string mac_from = absl::StrCat("-", kMacSize);
  RedisReply tail = foreground_->Run(name, {"GETRANGE", name, mac_from, "-1"});
  if (tail == nullptr) {
    *master_away = true;
    return std::nullopt;
  }
  if (tail->type != REDIS_REPLY_STRING ||
      absl::string_view(tail->str, tail->len) !=
          value.substr(value.size() - kMacSize)) {
    return std::nullopt;
  }
  return payload;
}

RedisTier::Read RedisTier::Get(const Digest& key) {
  using Outcome = Read::Outcome;
  const std::string name = EntryKey(key);
  // A replica may lag behind its master, or still hold a value the master
  // has deleted (a disproved record) or replaced: its value is taken only
  // once the master confirms it, and its nil never. The bytes come from
  // the replica; the master sends a MAC.
  bool asked = false;
  RedisReply from_replica = foreground_->GetFromReplica(name, &asked);
  if (asked) {
    bool master_away = false;
    std::optional<std::string> payload =
        ConfirmedByMaster(name, from_replica.get(), &master_away);
    if (payload.has_value()) {
      ++replica_hits_;
      return {Outcome::kFound, *std::move(payload)};
    }
    ++replica_misses_;
    // The master, not the replica, decides: without it, none is read.
    if (master_away) return {Outcome::kUnreachable, {}};
  }
  RedisReply reply = foreground_->Run(name, {"GET", name});
  if (reply == nullptr) return {Outcome::kUnreachable, {}};
  if (reply->type == REDIS_REPLY_NIL) {
    ++misses_;
    return {Outcome::kAbsent, {}};
  }
  std::optional<std::string> payload;
  if (reply->type == REDIS_REPLY_STRING) {
    payload = UnframeRemoteValue(
        name, absl::string_view(reply->str, reply->len), options_.keys);
  }
  if (!payload.has_value()) {
    CountCorrupt(key);
    return {Outcome::kDamaged, {}};
  }
  return {Outcome::kFound, *std::move(payload)};
}

void RedisTier::CountHit(uint64_t bytes) {
  ++hits_;
  bytes_down_ += bytes;
}

void RedisTier::CountCorrupt(const Digest& key) {
  ++corrupt_;
  JITCACHE_LOG(Warning) << "remote tier: the value of " << key.Hex()
                        << " is damaged or not signed by a team key; "
                           "ignored";
}

RedisTier::Lease RedisTier::TryLease(const Digest& key) {
  // Takes the lease where there is none, or where what is there does not
  // verify or has expired (KEYS[1] still holding ARGV[1], what was read).
  static constexpr char kTakeOverScript[] =
      "local v = redis.call('GET', KEYS[1]) "
      "if v == false or v == ARGV[1] then "
      "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end "
      "return 0";
  const std::string name = LeaseKey(key);
  const std::string ttl_ms =
      absl::StrCat(absl::ToInt64Milliseconds(options_.lease_ttl));
  const std::string value = LeaseValue(name, absl::Now() + options_.lease_ttl);
  RedisReply reply =
      foreground_->Run(name, {"SET", name, value, "NX", "PX", ttl_ms});
  if (reply == nullptr) return Lease::kUnavailable;
  if (reply->type == REDIS_REPLY_NIL) {
    RedisReply held = foreground_->Run(name, {"GET", name});
    if (held == nullptr) return Lease::kUnavailable;
    const std::string seen = held->type == REDIS_REPLY_STRING
                                 ? std::string(held->str, held->len)
                                 : std::string();
    if (held->type == REDIS_REPLY_STRING && LeaseValid(name, seen)) {
      return Lease::kHeldByOther;
    }
    RedisReply taken = foreground_->Run(
        name, {"EVAL", kTakeOverScript, "1", name, seen, value, ttl_ms});
    if (taken == nullptr) return Lease::kUnavailable;
    if (taken->type != REDIS_REPLY_INTEGER || taken->integer != 1) {
      return Lease::kHeldByOther;  // someone else took it meanwhile
    }
  }
  absl::MutexLock lock(&mu_);
  leases_[key] = value;
  return Lease::kTaken;
}

bool RedisTier::LeaseHeld(const Digest& key) {
  const std::string name = LeaseKey(key);
  RedisReply reply = foreground_->Run(name, {"GET", name});
  return reply != nullptr && reply->type == REDIS_REPLY_STRING &&
         LeaseValid(name, absl::string_view(reply->str, reply->len));
}

void RedisTier::CountLeaseWait() { ++leases_waited_; }

void RedisTier::Publish(const Digest& key, std::string entry) {
  absl::MutexLock lock(&mu_);
  if (entry.size() > options_.max_object) {
    to_release_.push_back(key);
    return;
  }
  to_publish_.emplace_back(
      key, FrameRemoteValue(EntryKey(key), entry, options_.keys.front()));
}

void RedisTier::Release(const Digest& key) {
  absl::MutexLock lock(&mu_);
  to_release_.push_back(key);
}

void RedisTier::Forget(const Digest& key) {
  absl::MutexLock lock(&mu_);
  to_forget_.push_back(key);
}

namespace {

// Re-signs, or deletes, the lease only if this node's value is still it.
constexpr char kRenewScript[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 "
    "else return 0 end";
constexpr char kReleaseScript[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) else return 0 end";

}  // namespace

void RedisTier::Background() {
  absl::Time next_renewal = absl::Now();
  while (true) {
    std::optional<BackgroundWork> work = NextWork(next_renewal);
    if (!work.has_value()) return;
    RenewLeases(work->renew);
    if (work->forget.has_value()) {
      const std::string name = EntryKey(*work->forget);
      background_->Run(name, {"DEL", name});
    }
    if (work->publish.has_value()) {
      const std::string name = EntryKey(work->publish->first);
      if (background_->Run(name, {"SET", name, work->publish->second}) !=
          nullptr) {
        bytes_up_ += work->publish->second.size();
      }
      work->release = work->publish->first;
    }
    if (work->release.has_value()) ReleaseLease(*work->release);
  }
}

std::optional<RedisTier::BackgroundWork> RedisTier::NextWork(
    absl::Time& next_renewal) {
  absl::MutexLock lock(&mu_);
  auto work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stopping_ || !to_publish_.empty() || !to_release_.empty() ||
           !to_forget_.empty();
  };
  mu_.AwaitWithDeadline(absl::Condition(&work), next_renewal);
  if (stopping_ && to_publish_.empty() && to_release_.empty() &&
      to_forget_.empty()) {
    return std::nullopt;
  }
  BackgroundWork next;
  if (!to_forget_.empty()) {
    next.forget = to_forget_.front();
    to_forget_.pop_front();
  }
  if (!to_publish_.empty()) {
    next.publish = std::move(to_publish_.front());
    to_publish_.pop_front();
  } else if (!to_release_.empty()) {
    next.release = to_release_.front();
    to_release_.pop_front();
  }
  if (absl::Now() >= next_renewal) {
    next.renew.assign(leases_.begin(), leases_.end());
    next_renewal = absl::Now() + options_.lease_ttl / 3;
  }
  return next;
}

void RedisTier::RenewLeases(
    const std::vector<std::pair<Digest, std::string>>& leases) {
  const std::string ttl_ms =
      absl::StrCat(absl::ToInt64Milliseconds(options_.lease_ttl));
  for (const auto& [key, old_value] : leases) {
    const std::string name = LeaseKey(key);
    const std::string value =
        LeaseValue(name, absl::Now() + options_.lease_ttl);
    RedisReply r = background_->Run(
        name, {"EVAL", kRenewScript, "1", name, old_value, value, ttl_ms});
    if (r == nullptr) continue;  // Redis away: try again next round
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(key);
    if (it == leases_.end() || it->second != old_value) continue;
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 1) {
      it->second = value;
    } else {
      leases_.erase(it);  // taken over: it had expired
    }
  }
}

void RedisTier::ReleaseLease(const Digest& key) {
  std::string held;
  {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(key);
    if (it == leases_.end()) return;
    held = std::move(it->second);
    leases_.erase(it);
  }
  if (held.empty()) return;
  const std::string name = LeaseKey(key);
  background_->Run(name, {"EVAL", kReleaseScript, "1", name, held});
}

RemoteStats RedisTier::stats() const {
  RemoteStats s;
  s.hits = hits_;
  s.misses = misses_;
  s.errors = counters_.errors.load();
  s.redirects = counters_.redirects.load();
  s.cluster_refreshes = counters_.refreshes.load();
  s.replica_hits = replica_hits_;
  s.replica_misses = replica_misses_;
  s.corrupt = corrupt_;
  s.leases_waited = leases_waited_;
  s.bytes_up = bytes_up_;
  s.bytes_down = bytes_down_;
  return s;
}

}  // namespace jitcache
