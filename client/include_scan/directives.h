#ifndef JITCACHE_CLIENT_INCLUDE_SCAN_DIRECTIVES_H_
#define JITCACHE_CLIENT_INCLUDE_SCAN_DIRECTIVES_H_

// Reading a file's text as the preprocessor does, for what it may include:
// its #include-like directives and the object-like #defines a computed
// #include may use. Text only: no files, no search paths (the walk in
// include_scan.cc does those). Pure functions; any thread.
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitcache::internal {

struct Directive {
  enum Kind { kQuote, kAngle, kQuoteNext, kAngleNext, kMacro } kind;
  std::string text;  // the name between the delimiters, or the macro text
};
struct Define {
  std::string name;
  std::string body;
};

// The directives (#include, #include_next, #import, __has_include) and
// object-like #defines of one file's text.
void ParseDirectives(std::string_view text, std::vector<Directive>* directives,
                     std::vector<Define>* defines);

// `text` as the preprocessor reads its lines: continuations spliced,
// comments replaced by a space (block comments keep their newlines).
std::string Cleaned(std::string_view text);

// "<name>" or "\"name\"" at the start of `s`: the name, or false.
bool TakeHeaderName(std::string_view s, bool* angle, std::string* name);

// Every string `text` may become by replacing its identifiers with the
// bodies `defines` gives them (or leaving them, as the macro may be
// undefined where the #include is). False when there are too many.
bool Expansions(
    const std::string& text,
    const std::unordered_map<std::string, std::vector<std::string>>& defines,
    std::unordered_set<std::string>* out);

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDE_SCAN_DIRECTIVES_H_
