#include "common/sha256.h"

#include <string>

#include "common/digest.h"
#include "gtest/gtest.h"

namespace jitcache {
namespace {

// FIPS 180-4 example vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Digest::Of("").Hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Digest::Of("abc").Hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      Digest::Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
          .Hex(),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Digest::Of(std::string(1000000, 'a')).Hex(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7));
  for (size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 999u}) {
    Sha256 h;
    h.Update(absl::string_view(data).substr(0, split));
    h.Update(absl::string_view(data).substr(split));
    EXPECT_EQ(Digest{h.Finish()}, Digest::Of(data)) << "split " << split;
  }
}

TEST(Digest, HexRoundTripAndErrors) {
  const Digest d = Digest::Of("x");
  absl::StatusOr<Digest> parsed = Digest::FromHex(d.Hex());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, d);
  EXPECT_FALSE(Digest::FromHex("abc").ok());
  EXPECT_FALSE(Digest::FromHex(std::string(64, 'g')).ok());
  EXPECT_FALSE(Digest::FromBytes("short").ok());
}

}  // namespace
}  // namespace jitcache
