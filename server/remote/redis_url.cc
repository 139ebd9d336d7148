#include "server/remote/redis_url.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace jitcache {
namespace {

constexpr char kForms[] =
    "expected redis://HOST:PORT[/DB], rediss://HOST:PORT[/DB], "
    "unix:///PATH[?db=N], redis-cluster://HOST:PORT[,HOST:PORT...] or "
    "redis-cluster+tls://HOST:PORT[,...]";

absl::Status Bad(absl::string_view url, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--remote=", url, ": ", why));
}

}  // namespace

std::string RedisEndpoint::Name() const {
  if (!unix_path.empty()) return unix_path;
  return host.find(':') != std::string::npos
             ? absl::StrCat("[", host, "]:", port)
             : absl::StrCat(host, ":", port);
}

absl::StatusOr<RedisEndpoint> ParseHostPort(absl::string_view text) {
  RedisEndpoint e;
  absl::string_view rest = text;
  if (absl::ConsumePrefix(&rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "': no ']' after an IPv6 address"));
    }
    e.host = std::string(rest.substr(0, close));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && !absl::ConsumePrefix(&rest, ":")) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "': expected [ADDRESS]:PORT"));
    }
  } else {
    const size_t colon = rest.rfind(':');
    e.host = std::string(rest.substr(0, colon));
    rest = colon == absl::string_view::npos ? absl::string_view()
                                            : rest.substr(colon + 1);
  }
  if (e.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': no host"));
  }
  if (!rest.empty() &&
      (!absl::SimpleAtoi(rest, &e.port) || e.port <= 0 || e.port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': bad port"));
  }
  return e;
}

absl::StatusOr<RedisTarget> ParseRedisUrl(absl::string_view url) {
  RedisTarget t;
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "unix://")) {
    RedisEndpoint e;
    const size_t q = rest.find("?db=");
    e.unix_path = std::string(rest.substr(0, q));
    if (q != absl::string_view::npos &&
        !absl::SimpleAtoi(rest.substr(q + 4), &t.db)) {
      return Bad(url, "bad ?db=");
    }
    if (e.unix_path.empty() || e.unix_path[0] != '/') {
      return Bad(url, "give an absolute path, unix:///path/redis.sock");
    }
    t.endpoints.push_back(std::move(e));
    return t;
  }
  if (absl::ConsumePrefix(&rest, "redis-cluster+tls://")) {
    t.cluster = t.tls = true;
  } else if (absl::ConsumePrefix(&rest, "redis-cluster://")) {
    t.cluster = true;
  } else if (absl::ConsumePrefix(&rest, "rediss://")) {
    t.tls = true;
  } else if (!absl::ConsumePrefix(&rest, "redis://")) {
    return Bad(url, kForms);
  }
  if (t.cluster) {
    for (absl::string_view seed : absl::StrSplit(rest, ',')) {
      absl::StatusOr<RedisEndpoint> e = ParseHostPort(seed);
      if (!e.ok()) return Bad(url, e.status().message());
      t.endpoints.push_back(*std::move(e));
    }
    return t;
  }
  const size_t slash = rest.find('/');
  if (slash != absl::string_view::npos &&
      !absl::SimpleAtoi(rest.substr(slash + 1), &t.db)) {
    return Bad(url, "bad database number");
  }
  absl::StatusOr<RedisEndpoint> e = ParseHostPort(rest.substr(0, slash));
  if (!e.ok()) return Bad(url, e.status().message());
  t.endpoints.push_back(*std::move(e));
  return t;
}

}  // namespace jitcache
