#ifndef JITCACHE_COMMON_TEXT_H_
#define JITCACHE_COMMON_TEXT_H_

// String helpers in plain C++, for the code that front ends loading nothing
// but libc and libstdc++ share with the daemon (the include scan, option
// parsing, keys): Abseil's would map its libraries into every process that
// preloads libnvrtc.so.13. Pure functions; thread-safe.
#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::text {

namespace internal {
inline void Append(std::string& out, std::string_view piece) {
  out.append(piece);
}
inline void Append(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> &&
         !std::same_as<T, bool>) void Append(std::string& out, T value) {
  char buffer[24];
  const auto [end, unused] =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}
}  // namespace internal

// The pieces (text, characters, integers in decimal) one after another.
template <typename... Pieces>
std::string Cat(const Pieces&... pieces) {
  std::string out;
  (internal::Append(out, pieces), ...);
  return out;
}

template <typename... Pieces>
void Append(std::string* out, const Pieces&... pieces) {
  (internal::Append(*out, pieces), ...);
}

inline bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.starts_with(prefix);
}
inline bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.ends_with(suffix);
}

inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Removes `prefix` from the front of `*text` when it is there.
inline bool ConsumePrefix(std::string_view* text, std::string_view prefix) {
  if (!text->starts_with(prefix)) return false;
  text->remove_prefix(prefix.size());
  return true;
}

// Every piece between `separator`s, empty ones included.
std::vector<std::string_view> Split(std::string_view text, char separator);

// The pieces with `separator` between each two.
template <typename Range>
std::string Join(const Range& pieces, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& piece : pieces) {
    if (!first) out.append(separator);
    first = false;
    out.append(std::string_view(piece));
  }
  return out;
}

// The C locale's classes, whatever the process's locale.
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool IsAlnum(char c) { return IsDigit(c) || IsAlpha(c); }
inline bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
         c == '\r';
}

std::string_view StripWhitespace(std::string_view text);
std::string ToLower(std::string_view text);

// A decimal integer, optionally signed, with nothing else but surrounding
// whitespace; false for anything else, or out of range.
bool ParseInt(std::string_view text, int* value);

// Lower-case hex of the bytes, and back (an even number of hex digits,
// either case; nullopt-like false otherwise).
std::string HexOf(std::string_view bytes);
bool BytesOfHex(std::string_view hex, std::string* bytes);

// `text` as a C string literal's body: \n, \r, \t, \", \', \\ escaped,
// and other bytes outside printable ASCII as three octal digits.
std::string CEscape(std::string_view text);

}  // namespace jitcache::text

#endif  // JITCACHE_COMMON_TEXT_H_
