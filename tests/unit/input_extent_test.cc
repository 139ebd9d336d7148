// How far the real nvJitLink reads an input, told from its bytes
// (NvJitLinkDifferential.BytesPastTheSize... checks the rule against the
// real nvJitLink; this checks the parsing, edge by edge).
#include "client/nvjitlink/input_extent.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace jitcache::nvjitlink {
namespace {

constexpr int kCubin = 1, kPtx = 2, kLtoir = 3, kFatbin = 4, kObject = 5,
              kLibrary = 6;

void PutLe(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// A fatbin header saying `body` bytes follow its 16.
std::string Fatbin(uint64_t body, size_t have) {
  std::string s(have, 'f');
  PutLe(s, 0, 0xBA55ED50u, 4);
  PutLe(s, 4, 1, 2);
  PutLe(s, 6, 16, 2);
  PutLe(s, 8, body, 8);
  return s;
}

// A 64-bit ELF file of `total` bytes: one section of bytes at 64..64+n and
// its section header table at the end (two entries: null and that one).
std::string Elf(uint64_t section_bytes, uint32_t type = 1) {
  const uint64_t shoff = 64 + section_bytes;
  std::string s(shoff + 2 * 64, '\0');
  s.replace(0, 4,
            "\x7f"
            "ELF");
  s[4] = 2;
  s[5] = 1;
  PutLe(s, 0x28, shoff, 8);
  PutLe(s, 0x3A, 64, 2);
  PutLe(s, 0x3C, 2, 2);
  PutLe(s, shoff + 64 + 4, type, 4);
  PutLe(s, shoff + 64 + 0x18, 64, 8);
  PutLe(s, shoff + 64 + 0x20, section_bytes, 8);
  return s;
}

std::string Member(const std::string& name, const std::string& data) {
  std::string header(60, ' ');
  header.replace(0, name.size(), name);
  const std::string size = std::to_string(data.size());
  header.replace(48, size.size(), size);
  header.replace(58, 2, "`\n");
  return header + data + (data.size() % 2 ? "\n" : "");
}

bool Reads(int type, const std::string& bytes, size_t size) {
  // The byte past `size` is the caller's: here a NUL only where the test
  // puts one.
  std::string buffer = bytes;
  buffer.push_back('#');
  return CopyReadsAsTheCallers(type, buffer.data(), size);
}

TEST(InputExtent, PtxNeedsANulAtItsEndOrJustPast) {
  const std::string ptx = ".version 9.0\n";
  EXPECT_TRUE(Reads(kPtx, ptx + std::string(1, '\0'), ptx.size() + 1));
  EXPECT_FALSE(Reads(kPtx, ptx + "\n", ptx.size())) << "a newline past it";
  EXPECT_TRUE(Reads(kPtx, ptx + std::string(1, '\0'), ptx.size()));
}

TEST(InputExtent, CubinsAndLtoIrAreReadBySize) {
  EXPECT_TRUE(Reads(kCubin,
                    "\x7f"
                    "ELF",
                    2));
  EXPECT_TRUE(Reads(kLtoir, "anything", 3));
}

TEST(InputExtent, AFatbinByItsHeader) {
  EXPECT_TRUE(Reads(kFatbin, Fatbin(100, 116), 116));
  EXPECT_TRUE(Reads(kFatbin, Fatbin(100, 130), 130)) << "bytes after it";
  EXPECT_FALSE(Reads(kFatbin, Fatbin(100, 116), 115)) << "read past size";
  EXPECT_FALSE(Reads(kFatbin, Fatbin(100, 116), 12)) << "no whole header";
  EXPECT_FALSE(Reads(kFatbin, Fatbin(UINT64_MAX, 116), 116)) << "overflow";
  std::string not_fatbin = Fatbin(100, 116);
  not_fatbin[0] = 'x';
  EXPECT_FALSE(Reads(kFatbin, not_fatbin, 116));
}

TEST(InputExtent, AHostObjectByItsSectionsAndTables) {
  const std::string elf = Elf(100);
  EXPECT_TRUE(Reads(kObject, elf, elf.size()));
  EXPECT_FALSE(Reads(kObject, elf, elf.size() - 1)) << "its table cut";
  // A section that ends past the table: the file is as long as it.
  std::string beyond = Elf(100);
  PutLe(beyond, 64 + 100 + 64 + 0x20, 100 + 2 * 64 + 50, 8);
  EXPECT_FALSE(Reads(kObject, beyond, beyond.size()));
  beyond.append(50, 's');
  EXPECT_TRUE(Reads(kObject, beyond, beyond.size()));
  // A section without bytes in the file (NOBITS) takes no room.
  std::string nobits = Elf(100, 8);
  PutLe(nobits, 64 + 100 + 64 + 0x20, 1 << 20, 8);
  EXPECT_TRUE(Reads(kObject, nobits, nobits.size()));
  std::string elf32 = Elf(100);
  elf32[4] = 1;
  EXPECT_FALSE(Reads(kObject, elf32, elf32.size())) << "not what hosts make";
  EXPECT_FALSE(Reads(kObject,
                     "\x7f"
                     "ELF",
                     4));
}

TEST(InputExtent, ALibraryMemberByMember) {
  const std::string ar =
      "!<arch>\n" + Member("a.o/", "12345") + Member("b.o/", "123456");
  EXPECT_TRUE(Reads(kLibrary, ar, ar.size()));
  EXPECT_FALSE(Reads(kLibrary, ar, ar.size() - 1)) << "its last member cut";
  EXPECT_FALSE(Reads(kLibrary, ar, ar.size() - 20)) << "read past size";
  EXPECT_TRUE(Reads(kLibrary, "!<arch>\n", 8)) << "no members";
  std::string bad = ar;
  bad[8 + 58] = 'x';
  EXPECT_FALSE(Reads(kLibrary, bad, bad.size())) << "a damaged header";
  EXPECT_FALSE(Reads(kLibrary, "!<arch", 6));
}

TEST(InputExtent, OtherTypesAreNotTold) {
  EXPECT_FALSE(Reads(0, "x", 1));
  EXPECT_FALSE(Reads(7, "x", 1));
  EXPECT_FALSE(Reads(10, "x", 1));
}

}  // namespace
}  // namespace jitcache::nvjitlink
