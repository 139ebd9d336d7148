#ifndef JITCACHE_TESTS_TESTING_ELF_SYMBOLS_H_
#define JITCACHE_TESTS_TESTING_ELF_SYMBOLS_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace jitcache::testing {

struct ElfSymbol {
  std::string name;
  int type = 0;     // STT_*: 2 is a function
  int binding = 0;  // STB_*: 1 is global
};

// The symbol table of a little-endian ELF64 image (a cubin); empty when the
// bytes are not one. Every offset is bounds-checked.
inline std::vector<ElfSymbol> ElfSymbols(const std::string& elf) {
  auto read = [&elf](size_t offset, size_t size, uint64_t* out) {
    if (offset + size > elf.size() || offset + size < offset) return false;
    uint64_t v = 0;
    std::memcpy(&v, elf.data() + offset, size);  // little endian host
    *out = v;
    return true;
  };
  std::vector<ElfSymbol> symbols;
  if (elf.size() < 64 ||
      elf.compare(0, 4,
                  "\x7f"
                  "ELF") != 0 ||
      elf[4] != 2) {
    return symbols;
  }
  uint64_t shoff = 0, shentsize = 0, shnum = 0;
  if (!read(0x28, 8, &shoff) || !read(0x3a, 2, &shentsize) ||
      !read(0x3c, 2, &shnum)) {
    return symbols;
  }
  for (uint64_t i = 0; i < shnum; ++i) {
    const size_t sh = shoff + i * shentsize;
    uint64_t type = 0, offset = 0, size = 0, link = 0, entsize = 0;
    if (!read(sh + 0x04, 4, &type) || type != 2 /*SHT_SYMTAB*/) continue;
    if (!read(sh + 0x18, 8, &offset) || !read(sh + 0x20, 8, &size) ||
        !read(sh + 0x28, 4, &link) || !read(sh + 0x38, 8, &entsize) ||
        entsize < 24) {
      continue;
    }
    const size_t strtab_sh = shoff + link * shentsize;
    uint64_t str_offset = 0, str_size = 0;
    if (!read(strtab_sh + 0x18, 8, &str_offset) ||
        !read(strtab_sh + 0x20, 8, &str_size) ||
        str_offset + str_size > elf.size()) {
      continue;
    }
    for (uint64_t s = 0; s + entsize <= size; s += entsize) {
      uint64_t name = 0, info = 0;
      if (!read(offset + s, 4, &name) || !read(offset + s + 4, 1, &info) ||
          name >= str_size) {
        continue;
      }
      const char* begin = elf.data() + str_offset + name;
      const size_t len = strnlen(begin, str_size - name);
      symbols.push_back({std::string(begin, len), static_cast<int>(info & 0xf),
                         static_cast<int>(info >> 4)});
    }
  }
  return symbols;
}

}  // namespace jitcache::testing

#endif  // JITCACHE_TESTS_TESTING_ELF_SYMBOLS_H_
