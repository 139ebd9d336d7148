#include "common/little_endian.h"

#include <string>

#include "gtest/gtest.h"

namespace jitcache {
namespace {

TEST(LittleEndian, BytesAreLeastSignificantFirst) {
  std::string out;
  le::Append<uint32_t>(&out, 0x04030201u);
  le::Append<uint64_t>(&out, 0x0c0b0a0908070605ull);
  EXPECT_EQ(
      out, std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 12));
  EXPECT_EQ(le::Get<uint32_t>(out.data()), 0x04030201u);
  EXPECT_EQ(le::Get<uint64_t>(out.data() + 4), 0x0c0b0a0908070605ull);
}

TEST(LittleEndian, HighBitsSurviveTheRoundTrip) {
  for (uint64_t v : {0ull, 0xffull, 0x80000000ull, 0xffffffffull,
                     0x8000000000000000ull, ~0ull}) {
    unsigned char bytes[8];
    le::Put<uint64_t>(bytes, v);
    EXPECT_EQ(le::Get<uint64_t>(bytes), v);
    le::Put<uint32_t>(bytes, static_cast<uint32_t>(v));
    EXPECT_EQ(le::Get<uint32_t>(bytes), static_cast<uint32_t>(v));
  }
}

}  // namespace
}  // namespace jitcache
