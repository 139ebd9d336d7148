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

struct ReplyDeleter {
  void operator()(redisReply* r) const {
    if (r != nullptr) freeReplyObject(r);
  }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

struct Endpoint {
  std::string host;
  int port = 6379;
  std::string unix_path;
  int db = 0;
};

absl::StatusOr<Endpoint> ParseUrl(absl::string_view url) {
  Endpoint e;
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "unix://")) {
    const size_t q = rest.find("?db=");
    e.unix_path = std::string(rest.substr(0, q));
    if (q != absl::string_view::npos &&
        !absl::SimpleAtoi(rest.substr(q + 4), &e.db)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--remote=", url, ": bad ?db="));
    }
    if (e.unix_path.empty() || e.unix_path[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("--remote=", url,
                       ": give an absolute path, unix:///path/redis.sock"));
    }
    return e;
  }
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--remote=", url,
        ": expected redis://HOST:PORT[/DB] or unix:///PATH[?db=N]"));
  }
  const size_t slash = rest.find('/');
  absl::string_view hostport = rest.substr(0, slash);
  if (slash != absl::string_view::npos &&
      !absl::SimpleAtoi(rest.substr(slash + 1), &e.db)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--remote=", url, ": bad database number"));
  }
  const size_t colon = hostport.rfind(':');
  e.host = std::string(hostport.substr(0, colon));
  if (colon != absl::string_view::npos &&
      !absl::SimpleAtoi(hostport.substr(colon + 1), &e.port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--remote=", url, ": bad port"));
  }
  if (e.host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--remote=", url, ": no host"));
  }
  return e;
}

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

// A Redis connection that reconnects on demand, with backoff after a
// failure. Run() answers nullptr when Redis cannot be used now.
class RedisTier::Connection {
 public:
  Connection(Endpoint endpoint, const RemoteOptions& options,
             std::atomic<uint64_t>* errors)
      : endpoint_(std::move(endpoint)),
        timeout_(options.timeout),
        user_(options.user),
        password_(options.password),
        errors_(errors) {}
  ~Connection() {
    if (ctx_ != nullptr) redisFree(ctx_);
  }

  // One command (printf-style, see redisCommand); nullptr on any failure,
  // including an error reply.
  template <typename... Args>
  Reply Run(const char* format, Args... args) {
    absl::MutexLock lock(&mu_);
    if (!Connected()) return nullptr;
    Reply reply(static_cast<redisReply*>(redisCommand(ctx_, format, args...)));
    if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
      Fail(reply == nullptr ? ctx_->errstr
                            : std::string(reply->str, reply->len));
      return nullptr;
    }
    return reply;
  }

 private:
  bool Connected() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (ctx_ != nullptr) return true;
    if (absl::Now() < retry_at_) return false;
    const timeval tv = ToTimeval(timeout_);
    ctx_ = endpoint_.unix_path.empty()
               ? redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port,
                                         tv)
               : redisConnectUnixWithTimeout(endpoint_.unix_path.c_str(), tv);
    if (ctx_ == nullptr || ctx_->err != 0) {
      Fail(ctx_ != nullptr ? ctx_->errstr : "out of memory");
      return false;
    }
    redisSetTimeout(ctx_, tv);
    if (!password_.empty()) {
      Reply r(static_cast<redisReply*>(
          user_.empty()
              ? redisCommand(ctx_, "AUTH %b", password_.data(),
                             password_.size())
              : redisCommand(ctx_, "AUTH %b %b", user_.data(), user_.size(),
                             password_.data(), password_.size())));
      if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
        Fail(r == nullptr
                 ? "AUTH: no answer"
                 : absl::StrCat("AUTH: ", std::string(r->str, r->len)));
        return false;
      }
    }
    if (endpoint_.db != 0) {
      Reply r(static_cast<redisReply*>(
          redisCommand(ctx_, "SELECT %d", endpoint_.db)));
      if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
        Fail("SELECT failed");
        return false;
      }
    }
    if (down_) {
      JITCACHE_LOG(Info) << "remote tier: connected again";
      down_ = false;
    }
    backoff_ = absl::Milliseconds(100);
    return true;
  }

  void Fail(const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++*errors_;
    if (!down_) {
      JITCACHE_LOG(Warning) << "remote tier unusable (" << why
                            << "); serving and compiling locally, retrying "
                               "with backoff";
      down_ = true;
    }
    if (ctx_ != nullptr) redisFree(ctx_);
    ctx_ = nullptr;
    retry_at_ = absl::Now() + backoff_;
    backoff_ = std::min(backoff_ * 2, absl::Seconds(5));
  }

  const Endpoint endpoint_;
  const absl::Duration timeout_;
  const std::string user_;
  const std::string password_;
  std::atomic<uint64_t>* const errors_;
  absl::Mutex mu_;
  redisContext* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time retry_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::Milliseconds(100);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
};

absl::StatusOr<std::unique_ptr<RedisTier>> RedisTier::Create(
    RemoteOptions options) {
  absl::StatusOr<Endpoint> endpoint = ParseUrl(options.url);
  if (!endpoint.ok()) return endpoint.status();
  if (options.keys.empty()) {
    return absl::InvalidArgumentError(
        "--remote needs --remote_key_file: the team key that signs what "
        "daemons write to Redis, so that no one else can make a node serve "
        "their kernel");
  }
  auto tier = std::unique_ptr<RedisTier>(new RedisTier(std::move(options)));
  tier->foreground_ =
      std::make_unique<Connection>(*endpoint, tier->options_, &tier->errors_);
  tier->background_ =
      std::make_unique<Connection>(*endpoint, tier->options_, &tier->errors_);
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

std::string RedisTier::EntryKey(const Digest& key) const {
  return absl::StrCat("jitcache:v2:entry:", key.Hex());
}
std::string RedisTier::LeaseKey(const Digest& key) const {
  return absl::StrCat("jitcache:v2:lease:", key.Hex());
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

RedisTier::Read RedisTier::Get(const Digest& key) {
  using Outcome = Read::Outcome;
  const std::string name = EntryKey(key);
  Reply reply = foreground_->Run("GET %b", name.data(), name.size());
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
  Reply reply = foreground_->Run("SET %b %b NX PX %s", name.data(), name.size(),
                                 value.data(), value.size(), ttl_ms.c_str());
  if (reply == nullptr) return Lease::kUnavailable;
  if (reply->type == REDIS_REPLY_NIL) {
    Reply held = foreground_->Run("GET %b", name.data(), name.size());
    if (held == nullptr) return Lease::kUnavailable;
    const std::string seen = held->type == REDIS_REPLY_STRING
                                 ? std::string(held->str, held->len)
                                 : std::string();
    if (held->type == REDIS_REPLY_STRING && LeaseValid(name, seen)) {
      return Lease::kHeldByOther;
    }
    Reply taken = foreground_->Run(
        "EVAL %s 1 %b %b %b %s", kTakeOverScript, name.data(), name.size(),
        seen.data(), seen.size(), value.data(), value.size(), ttl_ms.c_str());
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
  Reply reply = foreground_->Run("GET %b", name.data(), name.size());
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
      background_->Run("DEL %b", name.data(), name.size());
    }
    if (work->publish.has_value()) {
      const std::string name = EntryKey(work->publish->first);
      if (background_->Run("SET %b %b", name.data(), name.size(),
                           work->publish->second.data(),
                           work->publish->second.size()) != nullptr) {
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
    Reply r =
        background_->Run("EVAL %s 1 %b %b %b %s", kRenewScript, name.data(),
                         name.size(), old_value.data(), old_value.size(),
                         value.data(), value.size(), ttl_ms.c_str());
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
  background_->Run("EVAL %s 1 %b %b", kReleaseScript, name.data(), name.size(),
                   held.data(), held.size());
}

RemoteStats RedisTier::stats() const {
  RemoteStats s;
  s.hits = hits_;
  s.misses = misses_;
  s.errors = errors_.load();
  s.corrupt = corrupt_;
  s.leases_waited = leases_waited_;
  s.bytes_up = bytes_up_;
  s.bytes_down = bytes_down_;
  return s;
}

}  // namespace jitcache
