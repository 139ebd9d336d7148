#include "server/remote/redis_url.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

using ::testing::HasSubstr;

TEST(RedisUrl, EveryFormIsReadAndEveryMistakeNamed) {
  absl::StatusOr<RedisTarget> one =
      ParseRedisUrl("redis://cache.example:6380/2");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(one->cluster);
  EXPECT_FALSE(one->tls);
  ASSERT_EQ(one->endpoints.size(), 1u);
  EXPECT_EQ(one->endpoints[0].host, "cache.example");
  EXPECT_EQ(one->endpoints[0].port, 6380);
  EXPECT_EQ(one->db, 2);

  absl::StatusOr<RedisTarget> tls = ParseRedisUrl("rediss://[::1]:6390");
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->endpoints[0].host, "::1");
  EXPECT_EQ(tls->endpoints[0].Name(), "[::1]:6390");

  absl::StatusOr<RedisTarget> cluster =
      ParseRedisUrl("redis-cluster+tls://a.example:7000,10.0.0.2:7001,b");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_TRUE(cluster->cluster);
  EXPECT_TRUE(cluster->tls);
  ASSERT_EQ(cluster->endpoints.size(), 3u);
  EXPECT_EQ(cluster->endpoints[1].Name(), "10.0.0.2:7001");
  EXPECT_EQ(cluster->endpoints[2].port, 6379) << "the default port";

  absl::StatusOr<RedisTarget> unix_socket =
      ParseRedisUrl("unix:///run/redis/redis.sock?db=3");
  ASSERT_TRUE(unix_socket.ok()) << unix_socket.status();
  EXPECT_EQ(unix_socket->endpoints[0].unix_path, "/run/redis/redis.sock");
  EXPECT_EQ(unix_socket->db, 3);

  for (const auto& [url, says] :
       std::vector<std::pair<std::string, std::string>>{
           {"http://x:1", "expected redis://"},
           {"redis://:6379", "no host"},
           {"redis://h:port", "bad port"},
           {"redis://h:70000", "bad port"},
           {"redis://h:1/x", "bad database number"},
           {"redis-cluster://a:1,,b:2", "no host"},
           {"redis-cluster://[::1:7000", "no ']'"},
           {"unix://relative.sock", "absolute path"}}) {
    absl::StatusOr<RedisTarget> bad = ParseRedisUrl(url);
    ASSERT_FALSE(bad.ok()) << url;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(says)) << url;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(url));
  }
}

}  // namespace
}  // namespace jitcache
