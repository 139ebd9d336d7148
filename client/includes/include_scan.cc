#include "client/includes/include_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/cache_key.h"
#include "common/paths.h"
#include "common/resolve_path.h"
#include "jitcache/v1/scan_memo.pb.h"

namespace jitcache::internal {
namespace {

// Expansions of one macro #include worth following before giving up.
constexpr size_t kMaxExpansions = 256;
constexpr int kMaxExpansionRounds = 8;

// `dir`/`name` with "." and ".." resolved by text, as NVRTC names the file.
std::string JoinNormal(absl::string_view dir, absl::string_view name) {
  std::vector<absl::string_view> parts;
  const bool absolute =
      absl::StartsWith(name, "/") || (!dir.empty() && dir[0] == '/');
  auto add = [&](absl::string_view path) {
    for (absl::string_view part : absl::StrSplit(path, '/')) {
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (!parts.empty() && parts.back() != "..") {
          parts.pop_back();
        } else if (!absolute) {
          parts.push_back(part);
        }
        continue;
      }
      parts.push_back(part);
    }
  };
  if (!absl::StartsWith(name, "/")) add(dir);
  add(name);
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    absl::StrAppend(&out, parts[i]);
  }
  return out.empty() ? "." : out;
}

absl::string_view DirName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool IsIdentStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool IsIdent(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

absl::string_view SkipBlanks(absl::string_view s) {
  while (!s.empty() && (s[0] == ' ' || s[0] == '\t')) s.remove_prefix(1);
  return s;
}

absl::string_view TakeIdent(absl::string_view* s) {
  size_t n = 0;
  while (n < s->size() && IsIdent((*s)[n])) ++n;
  absl::string_view ident = s->substr(0, n);
  s->remove_prefix(n);
  return ident;
}

// "<name>" or "\"name\"" at the start of `s`: the name, or false.
bool TakeHeaderName(absl::string_view s, bool* angle, std::string* name) {
  if (s.empty() || (s[0] != '<' && s[0] != '"')) return false;
  const char close = s[0] == '<' ? '>' : '"';
  const size_t end = s.find(close, 1);
  if (end == absl::string_view::npos) return false;
  *angle = s[0] == '<';
  *name = std::string(s.substr(1, end - 1));
  return true;
}

// The text of a directive's argument without a trailing comment.
absl::string_view StripComment(absl::string_view s) {
  for (absl::string_view marker : {"//", "/*"}) {
    const size_t at = s.find(marker);
    if (at != absl::string_view::npos) s = s.substr(0, at);
  }
  return absl::StripAsciiWhitespace(s);
}

bool StatFile(const std::string& path, struct stat* st) {
  return ::stat(path.c_str(), st) == 0 && S_ISREG(st->st_mode);
}

// `dir`/`name` as the compiler spells it: nothing resolved.
std::string JoinSpelled(absl::string_view dir, absl::string_view name) {
  if (absl::StartsWith(name, "/") || dir.empty()) return std::string(name);
  return absl::StrCat(dir, "/", name);
}

// The directories an open of `spelled` must pass through before each "..":
// they must exist (a compile whose view lacks one finds nothing).
std::vector<std::string> DirsBeforeDotDot(absl::string_view spelled) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = spelled.find("..", at)) != absl::string_view::npos) {
    const bool starts = at == 0 || spelled[at - 1] == '/';
    const bool ends = at + 2 == spelled.size() || spelled[at + 2] == '/';
    if (starts && ends && at > 0) {
      out.push_back(JoinNormal("", spelled.substr(0, at)));
    }
    at += 2;
  }
  return out;
}

int64_t Ns(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Whole scans remembered in memory (each ~100 KB for CUB's 700 headers);
// past this many programs they start again (the kept ones on disk stay).
constexpr size_t kMaxMemos = 64;

// Every string `text` may become by replacing its identifiers with the
// bodies `defines` gives them (or leaving them, as the macro may be
// undefined where the #include is). False when there are too many.
bool Expansions(
    const std::string& text,
    const absl::flat_hash_map<std::string, std::vector<std::string>>& defines,
    absl::flat_hash_set<std::string>* out) {
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
                absl::StrCat(s.substr(0, i), body, s.substr(end));
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

}  // namespace

IncludeScanner::FileStamp IncludeScanner::StampOf(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size), Ns(st.st_mtim), Ns(st.st_ctim)};
}

// A file changed this recently may change again without its timestamps
// moving (they tick coarsely): it is read again next time.
bool IncludeScanner::Racy(const FileStamp& stamp) const {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return Ns(now) - std::max(stamp.mtime_ns, stamp.ctime_ns) < settle_ns_;
}

IncludeScanner& IncludeScanner::ForProcess() {
  static auto* scanner =
      new IncludeScanner(2'000'000'000, DefaultScanCachePath());
  return *scanner;
}

namespace {

void ToRecord(const std::string& path, const IncludeScanner::FileStamp& s,
              v1::FileStampRecord* r) {
  r->set_path(path);
  r->set_dev(s.dev);
  r->set_ino(s.ino);
  r->set_size(s.size);
  r->set_mtime_ns(s.mtime_ns);
  r->set_ctime_ns(s.ctime_ns);
}

std::pair<std::string, IncludeScanner::FileStamp> FromRecord(
    const v1::FileStampRecord& r) {
  return {r.path(), {r.dev(), r.ino(), r.size(), r.mtime_ns(), r.ctime_ns()}};
}

// Both formats go up whenever a scan finds other files for the same input
// (2: files beside the program, by absolute path, -include; directives
// behind comments, digraphs and continuations), so that no memo of an
// older scanner answers for a newer one.
constexpr uint32_t kMemoFormat = 2;

// Writes `record` to DIR/NAME whole or not at all (a reader in another
// process sees the old file or the new one). Best effort: it is a cache.
void KeepFile(const std::string& dir, const std::string& name,
              const google::protobuf::Message& record) {
  // Private to the user: whoever could write here could choose what the
  // user's compiles are keyed on.
  ::mkdir(dir.c_str(), 0700);
  const std::string path = dir + "/" + name;
  const std::string temp = absl::StrCat(path, ".", getpid(), ".tmp");
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool written = record.SerializeToFileDescriptor(fd);
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
  }
}

}  // namespace

std::shared_ptr<const IncludeScanner::Memo> IncludeScanner::LoadMemo(
    const Digest& key) const {
  const int fd =
      ::open((memo_dir_ + "/" + key.Hex()).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  v1::ScanMemo record;
  const bool parsed = record.ParseFromFileDescriptor(fd);
  ::close(fd);
  if (!parsed || record.format_version() != kMemoFormat ||
      record.result_paths_size() != record.result_sha256_size()) {
    return nullptr;
  }
  auto memo = std::make_shared<Memo>();
  for (const auto& r : record.files()) memo->files.push_back(FromRecord(r));
  for (const auto& r : record.dirs()) memo->dirs.push_back(FromRecord(r));
  auto result = std::make_shared<ScanResult>();
  for (int i = 0; i < record.result_paths_size(); ++i) {
    absl::StatusOr<Digest> d = Digest::FromBytes(record.result_sha256(i));
    if (!d.ok()) return nullptr;
    result->files.push_back({record.result_paths(i), *d});
  }
  absl::StatusOr<Digest> set = Digest::FromBytes(record.set_sha256());
  if (!set.ok()) return nullptr;
  result->set = *set;
  memo->result = std::move(result);
  return memo;
}

void IncludeScanner::SaveMemo(const Digest& key, const Memo& memo) const {
  v1::ScanMemo record;
  record.set_format_version(kMemoFormat);
  for (const auto& [path, stamp] : memo.files) {
    ToRecord(path, stamp, record.add_files());
  }
  for (const auto& [path, stamp] : memo.dirs) {
    ToRecord(path, stamp, record.add_dirs());
  }
  for (const ScannedFile& f : memo.result->files) {
    record.add_result_paths(f.path);
    record.add_result_sha256(std::string(f.digest.AsBytes()));
  }
  record.set_set_sha256(std::string(memo.result->set.AsBytes()));
  KeepFile(memo_dir_, key.Hex(), record);
}

namespace {

// `text` as the preprocessor reads its lines: continuations spliced,
// comments replaced by a space. A block comment keeps its newlines, so that
// a directive after one that spans lines is still seen (where text before
// the comment makes it none, that is one file too many in the key: a
// spurious miss at worst, never a stale hit).
std::string Cleaned(absl::string_view text) {
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

}  // namespace

void IncludeScanner::Parse(absl::string_view text,
                           std::vector<Directive>* directives,
                           std::vector<Define>* defines) {
  const std::string cleaned = Cleaned(text);
  for (absl::string_view line : absl::StrSplit(cleaned, '\n')) {
    line = SkipBlanks(line);
    // "%:" is the digraph of "#".
    if (!absl::ConsumePrefix(&line, "#") && !absl::ConsumePrefix(&line, "%:")) {
      continue;
    }
    line = SkipBlanks(line);
    const absl::string_view word = TakeIdent(&line);
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
      } else if (absl::string_view macro = StripComment(line); !macro.empty()) {
        directives->push_back({Directive::kMacro, std::string(macro)});
      }
    } else if (word == "define") {
      const absl::string_view name = TakeIdent(&line);
      // Function-like macros never name a header in practice.
      if (name.empty() || (!line.empty() && line[0] == '(')) continue;
      absl::string_view body = StripComment(line);
      if (absl::EndsWith(body, "\\")) continue;
      defines->push_back({std::string(name), std::string(body)});
    } else if (word == "if" || word == "elif" || word == "ifdef" ||
               word == "elifdef") {
      // __has_include(<x>) may make the compiler open x.
      for (size_t at = line.find("__has_include"); at != line.npos;
           at = line.find("__has_include", at + 1)) {
        absl::string_view rest = line.substr(at + 13);
        const bool next = absl::ConsumePrefix(&rest, "_next");
        rest = SkipBlanks(rest);
        if (!absl::ConsumePrefix(&rest, "(")) continue;
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

absl::StatusOr<std::string> IncludeScanner::Read(const std::string& path,
                                                 Digest* digest) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read included file ", path));
  }
  std::string data;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  ::close(fd);
  if (n < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read included file ", path));
  }
  if (data.find('\0') != std::string::npos) {
    return absl::FailedPreconditionError(
        absl::StrCat("included file ", path, " contains a NUL byte"));
  }
  if (digest != nullptr) *digest = Digest::Of(data);
  return data;
}

constexpr uint32_t kFilesFormat = 2;  // see kMemoFormat
// Headers kept on disk at most; past this the file starts again.
constexpr size_t kMaxKeptFiles = 50000;

void IncludeScanner::LoadKeptFiles() {
  if (kept_files_loaded_ || memo_dir_.empty()) return;
  kept_files_loaded_ = true;
  const int fd = ::open((memo_dir_ + "/files").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  v1::ScannedFiles record;
  const bool parsed = record.ParseFromFileDescriptor(fd);
  ::close(fd);
  if (!parsed || record.format_version() != kFilesFormat) return;
  for (const v1::ScannedFileRecord& r : record.files()) {
    absl::StatusOr<Digest> digest = Digest::FromBytes(r.sha256());
    if (!digest.ok() || r.directive_kinds_size() != r.directive_texts_size() ||
        r.define_names_size() != r.define_bodies_size()) {
      continue;
    }
    auto info = std::make_shared<FileInfo>();
    auto [path, stamp] = FromRecord(r.stamp());
    info->stamp = stamp;
    info->cacheable = true;
    info->digest = *digest;
    for (int i = 0; i < r.directive_kinds_size(); ++i) {
      const int kind = r.directive_kinds(i);
      if (kind < Directive::kQuote || kind > Directive::kMacro) continue;
      info->directives.push_back(
          {static_cast<Directive::Kind>(kind), r.directive_texts(i)});
    }
    for (int i = 0; i < r.define_names_size(); ++i) {
      info->defines.push_back({r.define_names(i), r.define_bodies(i)});
    }
    files_.try_emplace(std::move(path), std::move(info));
  }
}

void IncludeScanner::SaveKeptFiles() {
  v1::ScannedFiles record;
  record.set_format_version(kFilesFormat);
  {
    absl::MutexLock lock(&mu_);
    if (memo_dir_.empty() || files_read_since_save_ == 0) return;
    files_read_since_save_ = 0;
    if (files_.size() > kMaxKeptFiles) files_.clear();
    for (const auto& [path, info] : files_) {
      if (!info->cacheable) continue;
      v1::ScannedFileRecord* r = record.add_files();
      ToRecord(path, info->stamp, r->mutable_stamp());
      r->set_sha256(std::string(info->digest.AsBytes()));
      for (const Directive& d : info->directives) {
        r->add_directive_kinds(d.kind);
        r->add_directive_texts(d.text);
      }
      for (const Define& d : info->defines) {
        r->add_define_names(d.name);
        r->add_define_bodies(d.body);
      }
    }
  }
  KeepFile(memo_dir_, "files", record);
}

absl::StatusOr<std::shared_ptr<const IncludeScanner::FileInfo>>
IncludeScanner::Load(const std::string& path, const FileStamp& stamp) {
  {
    absl::MutexLock lock(&mu_);
    LoadKeptFiles();
    auto it = files_.find(path);
    if (it != files_.end() && it->second->cacheable &&
        it->second->stamp == stamp) {
      return it->second;
    }
  }
  auto info = std::make_shared<FileInfo>();
  files_read_.fetch_add(1);
  absl::StatusOr<std::string> text = Read(path, &info->digest);
  if (!text.ok()) return text.status();
  info->stamp = stamp;
  info->cacheable = !Racy(stamp) && stamp.size == text->size();
  Parse(*text, &info->directives, &info->defines);
  absl::MutexLock lock(&mu_);
  if (info->cacheable) ++files_read_since_save_;
  files_[path] = info;
  return std::shared_ptr<const FileInfo>(std::move(info));
}

Digest IncludeScanner::ScanKey(const ScanInput& input) {
  KeyHasher key(RequestKind::kCompile);
  key.Field(1, input.program_name);
  key.Field(2, input.source);
  key.Count(3, input.header_names.size());
  for (size_t i = 0; i < input.header_names.size(); ++i) {
    key.Field(4, input.header_names[i]);
    key.Field(5, input.header_bodies[i]);
  }
  key.Count(6, input.pre_includes.size());
  for (const std::string& p : input.pre_includes) key.Field(7, p);
  key.Count(8, input.defines.size());
  for (const std::string& d : input.defines) key.Field(9, d);
  key.Count(10, input.dirs.size());
  for (const SearchDir& dir : input.dirs) {
    key.Field(dir.toolkit ? 11 : 12, dir.path);
    key.Field(14, dir.spelled);
  }
  key.Field(13, input.cwd);
  key.Field(15, input.toolkit_fingerprint);
  return key.Finish();
}

bool IncludeScanner::StillValid(const Memo& memo) {
  struct stat st;
  for (const auto& [path, stamp] : memo.files) {
    if (!StatFile(path, &st) || !(StampOf(st) == stamp)) return false;
  }
  for (const auto& [path, stamp] : memo.dirs) {
    if (::stat(path.c_str(), &st) != 0 || !(StampOf(st) == stamp)) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::shared_ptr<const ScanResult>> IncludeScanner::Scan(
    const ScanInput& input) {
  const Digest scan_key = ScanKey(input);
  std::shared_ptr<const Memo> last;
  {
    absl::MutexLock lock(&mu_);
    auto it = memos_.find(scan_key);
    if (it != memos_.end()) last = it->second;
  }
  if (last != nullptr && StillValid(*last)) return last->result;
  if (!memo_dir_.empty()) {
    if (std::shared_ptr<const Memo> kept = LoadMemo(scan_key);
        kept != nullptr && StillValid(*kept)) {
      absl::MutexLock lock(&mu_);
      memos_[scan_key] = kept;
      return kept->result;
    }
  }
  walks_.fetch_add(1);
  absl::StatusOr<std::shared_ptr<const ScanResult>> result =
      Walk(input, scan_key);
  SaveKeptFiles();
  return result;
}

absl::StatusOr<std::shared_ptr<const ScanResult>> IncludeScanner::Walk(
    const ScanInput& input, const Digest& key) {
  // Where a file was found: its directory's index (-1 for the program and
  // in-memory headers), for #include_next and for what is sent.
  struct Origin {
    std::string path;  // "" for the program and in-memory headers
    int dir = -1;
    absl::string_view memory_name;  // in-memory header or program name
  };
  absl::flat_hash_map<std::string, std::vector<std::string>> defines;
  for (const std::string& d : input.defines) {
    const size_t eq = d.find('=');
    if (eq == std::string::npos) {
      defines[d].push_back("1");
    } else {
      defines[d.substr(0, eq)].push_back(d.substr(eq + 1));
    }
  }
  std::vector<ScannedFile> out;
  auto memo = std::make_shared<Memo>();
  absl::flat_hash_set<std::string> memo_dirs;
  // An absent path stays absent while the deepest directory on its way
  // that exists does not change.
  auto note_absent = [&](const std::string& path) {
    absl::string_view up = path;
    for (;;) {
      up = DirName(up);
      const std::string dir = up.empty() ? "." : std::string(up);
      if (!memo_dirs.insert(dir).second) return;
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0) {
        const FileStamp stamp = StampOf(st);
        if (Racy(stamp)) memo->cacheable = false;
        memo->dirs.emplace_back(dir, stamp);
        return;
      }
      if (dir == "." || dir == "/") return;
    }
  };
  // Each path is looked at once per scan; a header included from a hundred
  // files costs one stat. The kernel resolves the path as spelled (".."
  // after a link goes up from the link's target); `path` is its lexical
  // form. What the scan cannot tell apart from absent (a link loop, a
  // directory it may not search) is an error: the compile must not guess.
  absl::flat_hash_map<std::string, std::optional<struct stat>> probed;
  absl::Status probe_error;
  auto probe = [&](const std::string& spelled, struct stat* st) {
    auto [it, inserted] = probed.try_emplace(spelled);
    if (inserted) {
      struct stat s;
      if (::stat(spelled.c_str(), &s) == 0) {
        if (S_ISREG(s.st_mode)) it->second = s;
      } else if (errno != ENOENT && errno != ENOTDIR) {
        if (probe_error.ok()) {
          probe_error = absl::FailedPreconditionError(
              absl::StrCat("cannot tell whether ", spelled,
                           " exists: ", std::strerror(errno)));
        }
      }
      if (!it->second) note_absent(JoinNormal("", spelled));
    }
    if (!it->second) return false;
    *st = *it->second;
    return true;
  };
  // Directories that opens went through before a "..": the compile's view
  // has them only if a file sent or the working directory lies in them.
  absl::flat_hash_set<std::string> passed_dirs;
  absl::flat_hash_set<std::string> seen_spelled;
  absl::flat_hash_set<std::string> seen_files;
  absl::flat_hash_set<absl::string_view> seen_memory;
  std::deque<std::pair<Origin, std::shared_ptr<const std::vector<Directive>>>>
      queue;
  std::vector<std::pair<Origin, Directive>> macros;
  absl::flat_hash_set<std::string> macros_done;

  auto enqueue_text = [&](Origin origin, absl::string_view text) {
    std::vector<Directive> directives;
    std::vector<Define> file_defines;
    Parse(text, &directives, &file_defines);
    for (Define& d : file_defines) {
      defines[d.name].push_back(std::move(d.body));
    }
    queue.emplace_back(
        std::move(origin),
        std::make_shared<const std::vector<Directive>>(std::move(directives)));
  };

  // The directory the file at `path` belongs to: the longest that holds it.
  auto dir_of = [&](const std::string& path) -> const SearchDir* {
    const SearchDir* best = nullptr;
    for (const SearchDir& dir : input.dirs) {
      if (IsUnder(path, dir.path, /*or_equal=*/false) &&
          (best == nullptr || dir.path.size() > best->path.size())) {
        best = &dir;
      }
    }
    return best;
  };

  auto found = [&](const std::string& spelled, int dir,
                   const struct stat& st) -> absl::Status {
    if (!seen_spelled.insert(spelled).second) return absl::OkStatus();
    const std::string path = JoinNormal("", spelled);
    const SearchDir* owner = dir_of(path);
    const bool toolkit = owner != nullptr && owner->toolkit;
    if (!toolkit) {
      // The daemon lays the file out at this path: through a symbolic
      // link the compile would find nothing, or another file.
      // (Without a link on the way, the kernel's path is the lexical one.)
      absl::StatusOr<std::string> real = ResolvePath(spelled, nullptr);
      if (!real.ok()) return real.status();
      if (*real != path) {
        return absl::FailedPreconditionError(
            absl::StrCat("the program includes ", spelled,
                         " through a symbolic link (", *real, ")"));
      }
      for (std::string& d : DirsBeforeDotDot(spelled)) {
        passed_dirs.insert(std::move(d));
      }
    }
    if (!seen_files.insert(path).second) return absl::OkStatus();
    const FileStamp stamp = StampOf(st);
    absl::StatusOr<std::shared_ptr<const FileInfo>> info = Load(path, stamp);
    if (!info.ok()) return info.status();
    // The toolkit is the daemon's, fingerprinted in the scan's key and in
    // every compile's: its files need no stamps checked on each hit (a CUB
    // program has hundreds).
    if (!toolkit) {
      memo->files.emplace_back(path, stamp);
      if (!(*info)->cacheable) memo->cacheable = false;
      out.push_back({path, (*info)->digest});
    }
    for (const Define& d : (*info)->defines) defines[d.name].push_back(d.body);
    queue.emplace_back(Origin{path, dir, {}},
                       std::shared_ptr<const std::vector<Directive>>(
                           *info, &(*info)->directives));
    return absl::OkStatus();
  };

  auto resolve = [&](const Origin& from, Directive::Kind kind,
                     const std::string& name) -> absl::Status {
    if (name.empty()) return absl::OkStatus();
    const bool next =
        kind == Directive::kAngleNext || kind == Directive::kQuoteNext;
    const bool quote =
        kind == Directive::kQuote || kind == Directive::kQuoteNext;
    if (!next) {
      for (size_t i = 0; i < input.header_names.size(); ++i) {
        if (input.header_names[i] != name) continue;
        if (seen_memory.insert(input.header_names[i]).second) {
          enqueue_text(Origin{"", -1, input.header_names[i]},
                       input.header_bodies[i]);
        }
        return absl::OkStatus();
      }
    }
    struct stat st;
    if (name[0] == '/') {
      if (!probe(name, &st)) return probe_error;
      return found(name, -1, st);
    }
    if (quote && !next) {
      // Next to the including file; for the program (or -include), next to
      // its name, from the working directory.
      const std::string spelled =
          from.path.empty()
              ? JoinSpelled(JoinSpelled(input.cwd, DirName(from.memory_name)),
                            name)
              : JoinSpelled(DirName(from.path), name);
      if (probe(spelled, &st)) return found(spelled, from.dir, st);
    }
    const int start = next ? from.dir + 1 : 0;
    for (int i = std::max(start, 0); i < static_cast<int>(input.dirs.size());
         ++i) {
      const SearchDir& d = input.dirs[i];
      const std::string spelled = JoinSpelled(
          JoinSpelled(input.cwd, d.spelled.empty() ? d.path : d.spelled), name);
      if (probe(spelled, &st)) return found(spelled, i, st);
    }
    // Not there: not there for the daemon either (unless the scan could
    // not tell).
    return probe_error;
  };

  enqueue_text(Origin{"", -1, input.program_name}, input.source);
  {
    std::vector<Directive> pre;
    for (const std::string& p : input.pre_includes) {
      pre.push_back({Directive::kQuote, p});
    }
    queue.emplace_back(
        Origin{"", -1, input.program_name},
        std::make_shared<const std::vector<Directive>>(std::move(pre)));
  }
  for (;;) {
    while (!queue.empty()) {
      auto [origin, directives] = std::move(queue.front());
      queue.pop_front();
      for (const Directive& d : *directives) {
        if (d.kind == Directive::kMacro) {
          macros.emplace_back(origin, d);
          continue;
        }
        if (absl::Status s = resolve(origin, d.kind, d.text); !s.ok()) {
          return s;
        }
      }
    }
    // Macro #includes, with every #define seen so far; a file they add may
    // define more, so go round until nothing new is found.
    const size_t files_before = seen_files.size() + seen_memory.size();
    std::string unnamed;  // a macro #include that names no header yet
    for (const auto& [origin, d] : macros) {
      absl::flat_hash_set<std::string> expansions;
      const std::string where =
          origin.path.empty() ? std::string(origin.memory_name) : origin.path;
      if (!Expansions(d.text, defines, &expansions)) {
        return absl::FailedPreconditionError(
            absl::StrCat("#include ", d.text, " in ", where,
                         " has too many possible expansions"));
      }
      bool named = false;
      for (const std::string& e : expansions) {
        bool angle = false;
        std::string name;
        if (!TakeHeaderName(absl::StripAsciiWhitespace(e), &angle, &name)) {
          continue;
        }
        named = true;
        if (!macros_done.insert(absl::StrCat(where, "\n", e)).second) continue;
        if (absl::Status s = resolve(
                origin, angle ? Directive::kAngle : Directive::kQuote, name);
            !s.ok()) {
          return s;
        }
      }
      if (!named && unnamed.empty()) {
        unnamed = absl::StrCat("#include ", d.text, " in ", where);
      }
    }
    if (queue.empty() &&
        seen_files.size() + seen_memory.size() == files_before) {
      if (!unnamed.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            unnamed, " names no header that the #defines seen can make"));
      }
      break;
    }
  }
  if (!probe_error.ok()) return probe_error;
  for (const std::string& d : passed_dirs) {
    const bool seen =
        IsUnder(input.cwd, d, /*or_equal=*/true) ||
        std::any_of(out.begin(), out.end(), [&](const ScannedFile& f) {
          return IsUnder(f.path, d, /*or_equal=*/false);
        });
    if (!seen) {
      return absl::FailedPreconditionError(
          absl::StrCat("the program reaches a header through ", d,
                       "/.., a directory none of its files is in"));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ScannedFile& a, const ScannedFile& b) {
              return a.path < b.path;
            });
  auto result = std::make_shared<ScanResult>();
  std::vector<std::pair<absl::string_view, absl::string_view>> pairs;
  for (const ScannedFile& f : out)
    pairs.emplace_back(f.path, f.digest.AsBytes());
  result->set = IncludedSetDigest(std::move(pairs));
  result->files = std::move(out);
  if (memo->cacheable) {
    memo->result = result;
    if (!memo_dir_.empty()) SaveMemo(key, *memo);
    absl::MutexLock lock(&mu_);
    if (memos_.size() >= kMaxMemos) memos_.clear();
    memos_[key] = std::move(memo);
  }
  return std::shared_ptr<const ScanResult>(std::move(result));
}

}  // namespace jitcache::internal
