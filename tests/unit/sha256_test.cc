#include "common/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

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
    h.Update(std::string_view(data).substr(0, split));
    h.Update(std::string_view(data).substr(split));
    EXPECT_EQ(Digest{h.Finish()}, Digest::Of(data)) << "split " << split;
  }
}

// Against the FIPS implementation the hand-written one was checked
// against, on every length around the block boundaries and on long random
// inputs, incremental in odd pieces.
constexpr char kRandomDigest[] =
    "9aeb0f85f17cc188c955842030d517ead045b136c72083b7d3d87963d55df25d";

TEST(Sha256, LongAndSplitInputsMatchOneShot) {
  std::mt19937 random(7);
  std::string data(200000, '\0');
  for (char& c : data) c = static_cast<char>(random());
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (size_t n : {1000, 4095, 4096, 65537, 200000}) lengths.push_back(n);
  for (size_t n : lengths) {
    const std::string_view input(data.data(), n);
    Sha256 pieces;
    for (size_t at = 0; at < n; at += 37) {
      pieces.Update(input.substr(at, 37));
    }
    EXPECT_EQ(pieces.Finish(), Sha256::Hash(input)) << "length " << n;
  }
  // 200,000 bytes of this generator, hashed by sha256sum.
  EXPECT_EQ(Digest{Sha256::Hash(data)}.Hex(), kRandomDigest);
}

// libcrypto's SHA-256 of `data`: the oracle.
Sha256::Digest OpenSsl(std::string_view data) {
  Sha256::Digest out;
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &length, EVP_sha256(),
             nullptr);
  return out;
}

// Every length across the block and padding boundaries, random bytes, in
// one piece and in random pieces: libcrypto's one-call (EVP) digest each
// time.
TEST(Sha256, EqualsOpenSslForEveryLengthAndSplit) {
  std::mt19937 random(7);
  std::string bytes(300 + 70000, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {1023u, 4096u, 65535u, 70300u}) sizes.push_back(n);
  for (size_t n : sizes) {
    const std::string_view data(bytes.data(), n);
    const Sha256::Digest want = OpenSsl(data);
    EXPECT_EQ(Sha256::Hash(data), want) << n;
    Sha256 pieces;
    for (size_t at = 0; at < n;) {
      const size_t take = std::min<size_t>(n - at, random() % 130);
      pieces.Update(data.substr(at, take));
      at += take;
    }
    EXPECT_EQ(pieces.Finish(), want) << n << " in pieces";
  }
}

TEST(Digest, HexRoundTripAndErrors) {
  const Digest d = Digest::Of("x");
  absl::StatusOr<Digest> parsed = Digest::FromHex(d.Hex());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, d);
  EXPECT_FALSE(Digest::FromHex("abc").ok());
  EXPECT_FALSE(Digest::FromHex(std::string(64, 'g')).ok());
  EXPECT_FALSE(Digest::FromBytes("short").has_value());
}

}  // namespace
}  // namespace jitcache
