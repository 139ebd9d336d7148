// The remote tier's share of a remote hit, on a Redis the caller started:
// GET, unframe and check the frame (its HMAC under a team key), parse the
// entry, and check the object's digest, which is what a node does before it
// stores and serves an entry from Redis (the local store write and the client's
// round trip come on top). Prints one JSON object on stdout.
//
//   jitcache_remote_bench REDIS_URL ITERATIONS [CA_FILE]
// (CA_FILE: for rediss:// and redis-cluster+tls://, the servers' CA.)
// JITCACHE_BENCH_REPLY_BUFFER_KEPT=N: the links keep N bytes of reply
// buffer (RedisLinkOptions::reply_buffer_kept; 16384 is hiredis's own).
// JITCACHE_BENCH_REPLICA_READS=1: on a cluster, reads go to replicas first
// (--remote_replica_reads); "replica_hits" says how many they answered.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/digest.h"
#include "jitcache/v1/jitcache.pb.h"
#include "server/remote/redis_tier.h"

namespace {

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s REDIS_URL ITERATIONS [CA_FILE]\n", argv[0]);
    return 2;
  }
  jitcache::RemoteOptions options;
  options.url = argv[1];
  if (argc == 4) options.tls.ca_file = argv[3];
  // A link's kept reply buffer, to compare (16384 is hiredis's own).
  if (const char* kept = std::getenv("JITCACHE_BENCH_REPLY_BUFFER_KEPT")) {
    options.reply_buffer_kept = std::strtoull(kept, nullptr, 10);
  }
  if (const char* replicas = std::getenv("JITCACHE_BENCH_REPLICA_READS")) {
    options.replica_reads = std::string(replicas) == "1";
  }
  // A team key as a daemon has one: every value is signed and verified.
  std::mt19937_64 key_random(7);
  std::string team_key(32, '\0');
  for (char& c : team_key) c = static_cast<char>(key_random());
  options.keys = {team_key};
  auto tier = jitcache::RedisTier::Create(options);
  if (!tier.ok()) {
    std::fprintf(stderr, "%s\n", tier.status().ToString().c_str());
    return 3;
  }
  const int iterations = std::atoi(argv[2]);
  std::mt19937_64 random(42);
  std::string json = "{";
  for (const auto& [name, size] : std::vector<std::pair<std::string, size_t>>{
           {"4KiB", 4 << 10}, {"150KiB", 150 << 10}, {"1.3MiB", 1331 << 10}}) {
    std::string object(size, '\0');
    for (char& c : object) c = static_cast<char>(random());
    const jitcache::Digest digest = jitcache::Digest::Of(object);
    const jitcache::Digest key = jitcache::Digest::Of(name);
    jitcache::v1::BundleEntry entry;
    entry.set_key(key.Hex());
    entry.set_record(std::string(200, 'r'));
    jitcache::v1::BundleObject* o = entry.add_objects();
    o->set_digest(digest.Hex());
    o->set_data(object);
    if ((*tier)->TryLease(key) != jitcache::RedisTier::Lease::kTaken) {
      std::fprintf(stderr, "no lease: is Redis at %s?\n", argv[1]);
      return 1;
    }
    (*tier)->Publish(key, entry.SerializeAsString());
    while (!(*tier)->Get(key).found()) absl::SleepFor(absl::Milliseconds(5));
    std::vector<double> us;
    for (int i = 0; i < iterations; ++i) {
      const absl::Time start = absl::Now();
      const jitcache::RedisTier::Read read = (*tier)->Get(key);
      jitcache::v1::BundleEntry got;
      if (!read.found() || !got.ParseFromString(read.entry) ||
          jitcache::Digest::Of(got.objects(0).data()).Hex() !=
              got.objects(0).digest()) {
        std::fprintf(stderr, "bad value\n");
        return 1;
      }
      us.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
    }
    absl::StrAppend(&json, json.size() > 1 ? ", " : "", "\"", name,
                    "\": {\"p50_us\": ", Percentile(us, 0.5),
                    ", \"p99_us\": ", Percentile(us, 0.99), "}");
  }
  absl::StrAppend(&json, ", \"replica_hits\": ", (*tier)->stats().replica_hits,
                  ", \"replica_misses\": ", (*tier)->stats().replica_misses);
  std::printf("%s}\n", json.c_str());
  return 0;
}
