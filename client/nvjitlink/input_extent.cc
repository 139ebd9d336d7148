#include "client/nvjitlink/input_extent.h"

#include <cstdint>
#include <cstring>
#include <optional>

namespace jitcache::nvjitlink {
namespace {

// nvJitLinkInputType's numbers.
constexpr int kCubin = 1, kPtx = 2, kLtoir = 3, kFatbin = 4, kObject = 5,
              kLibrary = 6;

// A little-endian unsigned integer of `bytes` bytes at `at`, when it lies
// within `size`.
std::optional<uint64_t> Le(const unsigned char* p, size_t size, uint64_t at,
                           int bytes) {
  if (at > size || size - at < static_cast<uint64_t>(bytes)) {
    return std::nullopt;
  }
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[at + i];
  return v;
}

// end = a + b * c, false on overflow.
bool End(uint64_t a, uint64_t b, uint64_t c, uint64_t* end) {
  if (b != 0 && c > (UINT64_MAX - a) / b) return false;
  *end = a + b * c;
  return true;
}

// A fatbin: its header's size plus the size of what follows it.
std::optional<uint64_t> FatbinLength(const unsigned char* p, size_t size) {
  const std::optional<uint64_t> magic = Le(p, size, 0, 4);
  const std::optional<uint64_t> header = Le(p, size, 6, 2);
  const std::optional<uint64_t> body = Le(p, size, 8, 8);
  if (magic != 0xBA55ED50u || !header || !body) return std::nullopt;
  uint64_t end = 0;
  if (!End(*header, 1, *body, &end)) return std::nullopt;
  return end;
}

// A 64-bit little-endian ELF file: the furthest of its header, its program
// and section header tables, and every section with bytes in the file,
// when all its headers lie within `size`.
std::optional<uint64_t> ElfLength(const unsigned char* p, size_t size) {
  constexpr uint64_t kHeader = 64;
  constexpr uint32_t kNoBits = 8;
  if (size < kHeader ||
      std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      p[4] != 2 || p[5] != 1) {
    return std::nullopt;
  }
  const uint64_t phoff = *Le(p, size, 0x20, 8);
  const uint64_t shoff = *Le(p, size, 0x28, 8);
  const uint64_t phentsize = *Le(p, size, 0x36, 2);
  const uint64_t phnum = *Le(p, size, 0x38, 2);
  const uint64_t shentsize = *Le(p, size, 0x3A, 2);
  const uint64_t shnum = *Le(p, size, 0x3C, 2);
  uint64_t extent = kHeader, end = 0;
  if (!End(phoff, phnum, phentsize, &end)) return std::nullopt;
  if (phnum > 0) extent = end > extent ? end : extent;
  if (!End(shoff, shnum, shentsize, &end) || end > size) return std::nullopt;
  if (shnum > 0) extent = end > extent ? end : extent;
  if (shnum > 0 && shentsize < 0x28) return std::nullopt;
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t at = shoff + i * shentsize;
    if (*Le(p, size, at + 4, 4) == kNoBits) continue;
    if (!End(*Le(p, size, at + 0x18, 8), 1, *Le(p, size, at + 0x20, 8), &end)) {
      return std::nullopt;
    }
    extent = end > extent ? end : extent;
  }
  return extent;
}

// An ar archive read member by member: true when its members, each padded
// to an even length, end exactly at `size`.
bool ArchiveEndsAt(const unsigned char* p, size_t size) {
  constexpr uint64_t kMagic = 8, kMemberHeader = 60;
  if (size < kMagic || std::memcmp(p, "!<arch>\n", kMagic) != 0) return false;
  uint64_t at = kMagic;
  while (at < size) {
    if (size - at < kMemberHeader || p[at + 58] != '`' || p[at + 59] != '\n') {
      return false;
    }
    uint64_t length = 0;
    bool digits = false;
    for (uint64_t i = at + 48; i < at + 58 && p[i] != ' '; ++i) {
      if (p[i] < '0' || p[i] > '9' || length > UINT64_MAX / 10 - 9) {
        return false;
      }
      length = length * 10 + (p[i] - '0');
      digits = true;
    }
    if (!digits || length > size - at - kMemberHeader) return false;
    at += kMemberHeader + length + (length & 1);
  }
  return at == size;
}

}  // namespace

bool CopyReadsAsTheCallers(int type, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  switch (type) {
    case kPtx:
      return size > 0 && (p[size - 1] == '\0' || p[size] == '\0');
    case kCubin:
    case kLtoir:
      return true;
    case kFatbin: {
      const std::optional<uint64_t> length = FatbinLength(p, size);
      return length.has_value() && *length <= size;
    }
    case kObject: {
      const std::optional<uint64_t> length = ElfLength(p, size);
      return length.has_value() && *length <= size;
    }
    case kLibrary:
      return ArchiveEndsAt(p, size);
    default:
      return false;
  }
}

}  // namespace jitcache::nvjitlink
