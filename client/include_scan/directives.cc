#include "client/include_scan/directives.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/text.h"

namespace jitcache::internal {
namespace {

// Expansions of one macro #include worth following before giving up.
constexpr size_t kMaxExpansions = 256;
constexpr int kMaxExpansionRounds = 8;

bool IsIdentStart(char c) {
  return text::IsAlpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdent(char c) {
  return text::IsAlnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string_view SkipBlanks(std::string_view s) {
  while (!s.empty() && (s[0] == ' ' || s[0] == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view TakeIdent(std::string_view* s) {
  size_t n = 0;
  while (n < s->size() && IsIdent((*s)[n])) ++n;
  std::string_view ident = s->substr(0, n);
  s->remove_prefix(n);
  return ident;
}

// The text of a directive's argument without a trailing comment.
std::string_view StripComment(std::string_view s) {
  for (std::string_view marker : {"//", "/*"}) {
    const size_t at = s.find(marker);
    if (at != std::string_view::npos) s = s.substr(0, at);
  }
  return text::StripWhitespace(s);
}

}  // namespace

// "<name>" or "\"name\"" at the start of `s`: the name, or false.
bool TakeHeaderName(std::string_view s, bool* angle, std::string* name) {
  if (s.empty() || (s[0] != '<' && s[0] != '"')) return false;
  const char close = s[0] == '<' ? '>' : '"';
  const size_t end = s.find(close, 1);
  if (end == std::string_view::npos) return false;
  *angle = s[0] == '<';
  *name = std::string(s.substr(1, end - 1));
  return true;
}

// `text` as the preprocessor reads its lines: continuations spliced,
// comments replaced by a space. A block comment keeps its newlines, so that
// a directive after one that spans lines is still seen (where text before
// the comment makes it none, that is one file too many in the key: a
// spurious miss at worst, never a stale hit).
std::string Cleaned(std::string_view text) {
  std::string spliced;
  spliced.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      size_t j = i + 1;
      if (j < text.size() && text[j] == '\r') ++j;
      if (j < text.size() && text[j] == '\n') {
        i = j;
        continue;
      }
    }
    spliced.push_back(text[i]);
  }
  std::string out;
  out.reserve(spliced.size());
  char literal = 0;  // the quote of the literal we are in, if any
  for (size_t i = 0; i < spliced.size(); ++i) {
    const char c = spliced[i];
    const char next = i + 1 < spliced.size() ? spliced[i + 1] : '\0';
    if (literal != 0) {
      out.push_back(c);
      if (c == '\\' && next != '\n' && next != '\0') {
        out.push_back(next);
        ++i;
      } else if (c == literal || c == '\n') {
        literal = 0;  // an unterminated literal ends with its line
      }
    } else if (c == '/' && next == '/') {
      while (i < spliced.size() && spliced[i] != '\n') ++i;
      out.push_back(' ');
      if (i < spliced.size()) out.push_back('\n');
    } else if (c == '/' && next == '*') {
      out.push_back(' ');
      for (i += 2; i < spliced.size(); ++i) {
        if (spliced[i] == '*' && i + 1 < spliced.size() &&
            spliced[i + 1] == '/') {
          ++i;
          break;
        }
        if (spliced[i] == '\n') out.push_back('\n');
      }
    } else {
      // A quote after a digit or letter is a digit separator (1'000) or
      // part of a prefix, not a literal's start.
      if ((c == '"' || c == '\'') &&
          (c == '"' || out.empty() || !IsIdent(out.back()))) {
        literal = c;
      }
      out.push_back(c);
    }
  }
  return out;
}

void ParseDirectives(std::string_view text, std::vector<Directive>* directives,
                     std::vector<Define>* defines) {
  const std::string cleaned = Cleaned(text);
  for (std::string_view line : text::Split(cleaned, '\n')) {
    line = SkipBlanks(line);
    // "%:" is the digraph of "#".
    if (!text::ConsumePrefix(&line, "#") && !text::ConsumePrefix(&line, "%:")) {
      continue;
    }
    line = SkipBlanks(line);
    const std::string_view word = TakeIdent(&line);
    line = SkipBlanks(line);
    if (word == "include" || word == "include_next" || word == "import") {
      const bool next = word == "include_next";
      bool angle = false;
      std::string name;
      if (TakeHeaderName(line, &angle, &name)) {
        directives->push_back(
            {angle ? (next ? Directive::kAngleNext : Directive::kAngle)
                   : (next ? Directive::kQuoteNext : Directive::kQuote),
             std::move(name)});
      } else if (std::string_view macro = StripComment(line); !macro.empty()) {
        directives->push_back({Directive::kMacro, std::string(macro)});
      }
    } else if (word == "define") {
      const std::string_view name = TakeIdent(&line);
      // Function-like macros never name a header in practice.
      if (name.empty() || (!line.empty() && line[0] == '(')) continue;
      std::string_view body = StripComment(line);
      if (text::EndsWith(body, "\\")) continue;
      defines->push_back({std::string(name), std::string(body)});
    } else if (word == "if" || word == "elif" || word == "ifdef" ||
               word == "elifdef") {
      // __has_include(<x>) may make the compiler open x.
      for (size_t at = line.find("__has_include"); at != line.npos;
           at = line.find("__has_include", at + 1)) {
        std::string_view rest = line.substr(at + 13);
        const bool next = text::ConsumePrefix(&rest, "_next");
        rest = SkipBlanks(rest);
        if (!text::ConsumePrefix(&rest, "(")) continue;
        bool angle = false;
        std::string name;
        if (TakeHeaderName(SkipBlanks(rest), &angle, &name)) {
          directives->push_back(
              {angle ? (next ? Directive::kAngleNext : Directive::kAngle)
                     : (next ? Directive::kQuoteNext : Directive::kQuote),
               std::move(name)});
        }
      }
    }
  }
}

// Every string `text` may become by replacing its identifiers with the
// bodies `defines` gives them (or leaving them, as the macro may be
// undefined where the #include is). False when there are too many.
bool Expansions(
    const std::string& text,
    const std::unordered_map<std::string, std::vector<std::string>>& defines,
    std::unordered_set<std::string>* out) {
  std::vector<std::string> frontier = {text};
  out->insert(text);
  for (int round = 0; round < kMaxExpansionRounds && !frontier.empty();
       ++round) {
    std::vector<std::string> next;
    for (const std::string& s : frontier) {
      for (size_t i = 0; i < s.size();) {
        if (!IsIdentStart(s[i]) || (i > 0 && IsIdent(s[i - 1]))) {
          ++i;
          continue;
        }
        size_t end = i;
        while (end < s.size() && IsIdent(s[end])) ++end;
        auto it = defines.find(s.substr(i, end - i));
        if (it != defines.end()) {
          for (const std::string& body : it->second) {
            std::string variant =
                text::Cat(s.substr(0, i), body, s.substr(end));
            if (out->insert(variant).second) next.push_back(std::move(variant));
            if (out->size() > kMaxExpansions) return false;
          }
        }
        i = end;
      }
    }
    frontier = std::move(next);
  }
  return true;
}

}  // namespace jitcache::internal
