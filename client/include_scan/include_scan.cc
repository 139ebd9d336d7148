#include "client/include_scan/include_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "client/include_scan/directives.h"
#include "common/cache_key.h"
#include "common/paths.h"
#include "common/place_anchor.h"
#include "common/plain_status.h"
#include "common/resolve_path.h"
#include "common/text.h"

namespace jitcache::internal {
namespace {

// `dir`/`name` with "." and ".." resolved by text, as NVRTC names the file.
std::string JoinNormal(std::string_view dir, std::string_view name) {
  if (text::StartsWith(name, "/") || dir.empty()) {
    return LexicallyNormal(std::string_view(name.data(), name.size()));
  }
  return LexicallyNormal(text::Cat(dir, "/", name));
}

std::string_view DirName(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// `dir`/`name` as the compiler spells it: nothing resolved.
std::string JoinSpelled(std::string_view dir, std::string_view name) {
  if (text::StartsWith(name, "/") || dir.empty()) return std::string(name);
  return text::Cat(dir, "/", name);
}

// Whole scans remembered in memory (each ~100 KB for CUB's 700 headers);
// past this many programs they start again (the kept ones on disk stay).
constexpr size_t kMaxMemos = 64;

}  // namespace

// A file changed this recently may change again without its timestamps
// moving (they tick coarsely): it is read again next time.
bool IncludeScanner::Racy(const FileStamp& stamp) const {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return StampNs(now) - std::max(stamp.mtime_ns, stamp.ctime_ns) < settle_ns_;
}

IncludeScanner& IncludeScanner::ForProcess() {
  static auto* scanner = [] {
    // JITCACHE_SCAN_WATCH_AFTER: stamps checked before watching (the
    // differential tests watch from the first check).
    uint64_t watch_after = kWatchAfterStats;
    if (const char* set = std::getenv("JITCACHE_SCAN_WATCH_AFTER");
        set != nullptr && *set != '\0') {
      watch_after = std::strtoull(set, nullptr, 10);
    }
    return new IncludeScanner(2'000'000'000, DefaultScanCachePath(),
                              watch_after);
  }();
  return *scanner;
}

void IncludeScanner::Parse(std::string_view text,
                           std::vector<Directive>* directives,
                           std::vector<Define>* defines) {
  ParseDirectives(text, directives, defines);
}

PlainStatusOr<std::string> IncludeScanner::Read(const std::string& path,
                                                Digest* digest) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return PlainStatus::Error(text::Cat("cannot read included file ", path));
  }
  std::string data;
  char buffer[65536];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  ::close(fd);
  if (n < 0) {
    return PlainStatus::Error(text::Cat("cannot read included file ", path));
  }
  if (data.find('\0') != std::string::npos) {
    return PlainStatus::Error(
        text::Cat("included file ", path, " contains a NUL byte"));
  }
  if (digest != nullptr) *digest = Digest::Of(data);
  return data;
}

PlainStatusOr<std::shared_ptr<const IncludeScanner::FileInfo>>
IncludeScanner::Load(const std::string& path, const FileStamp& stamp) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    LoadKeptFiles();
    auto it = files_.find(path);
    if (it != files_.end() && it->second->cacheable &&
        it->second->stamp == stamp) {
      return it->second;
    }
  }
  auto info = std::make_shared<FileInfo>();
  files_read_.fetch_add(1);
  PlainStatusOr<std::string> text = Read(path, &info->digest);
  if (!text.ok()) return text.status();
  info->stamp = stamp;
  info->cacheable = !Racy(stamp) && stamp.size == text->size();
  Parse(*text, &info->directives, &info->defines);
  std::lock_guard<std::mutex> lock(mu_);
  if (info->cacheable) ++files_read_since_save_;
  files_[path] = info;
  return std::shared_ptr<const FileInfo>(std::move(info));
}

void IncludeScanner::KeyTheText(const ScanInput& input, KeyHasher& key) {
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
}

Digest IncludeScanner::ScanKey(const ScanInput& input) {
  KeyHasher key(RequestKind::kCompile);
  key.Field(1, input.program_name);
  KeyTheText(input, key);
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
  for (const auto& [path, stamp] : memo.depends_on->files) {
    if (!FileStampHolds(path, stamp)) return false;
  }
  for (const auto& [path, stamp] : memo.depends_on->dirs) {
    if (!StampHolds(path, stamp)) return false;
  }
  for (const std::string& path : memo.depends_on->absent_files) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return false;
  }
  return true;
}

namespace {

// How the kernel resolves an include directory, and whether that is the
// toolkit's.
struct DirResolution {
  bool ok = false;
  std::string real;
  std::vector<PathLink> links;  // every symbolic link met, in order
  std::string toolkit_dir;      // `real` when it is, or lies in, a toolkit dir
  bool operator==(const DirResolution&) const = default;
};

DirResolution Resolve(const std::string& dir,
                      const std::vector<std::string>& toolkit_dirs) {
  DirResolution out;
  std::string error;
  std::optional<std::string> real = ResolvePath(dir, &out.links, &error);
  if (!real.has_value()) return out;
  out.ok = true;
  out.real = *std::move(real);
  for (const std::string& t : toolkit_dirs) {
    if (IsUnder(out.real, t, true)) out.toolkit_dir = out.real;
  }
  return out;
}

}  // namespace

std::string IncludeScanner::ToolkitDirOf(
    const std::string& dir, const std::vector<std::string>& toolkit_dirs) {
  // The watch takes lexically normal paths, and ".." after a link is not
  // what it reads lexically: such a spelling is resolved every time.
  if (!IsNormalAbsolutePath(dir)) {
    dirs_resolved_.fetch_add(1);
    return Resolve(dir, toolkit_dirs).toolkit_dir;
  }
  // The same spelling answers differently for another toolkit.
  std::string key = dir;
  for (const std::string& t : toolkit_dirs) key.append(1, '\0').append(t);
  std::optional<ResolvedDir> known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = resolved_dirs_.find(key); it != resolved_dirs_.end()) {
      known = it->second;
    }
  }
  if (known.has_value() && watch_.Changes() == known->changes) {
    return known->toolkit_dir;
  }
  dirs_resolved_.fetch_add(1);
  // Resolved, then watched where anything could change the answer (the
  // directory of every link met, for the link; both ends, and every
  // directory above them for the name that leads on), the count of changes
  // read, and resolved again: kept only when both resolutions agree, so
  // that a change before the count is in the second and one after it is
  // an event.
  const DirResolution first = Resolve(dir, toolkit_dirs);
  std::vector<std::string> link_paths;
  for (const auto& [path, target] : first.links) link_paths.push_back(path);
  const bool watched = first.ok && watch_.Watch(link_paths, {dir, first.real});
  const uint64_t changes = watch_.Changes();
  const DirResolution second = Resolve(dir, toolkit_dirs);
  std::lock_guard<std::mutex> lock(mu_);
  if (watched && second == first) {
    resolved_dirs_[key] = {second.toolkit_dir, changes};
  } else {
    resolved_dirs_.erase(key);
  }
  return second.toolkit_dir;
}

bool IncludeScanner::UnchangedSinceChecked(const Digest& key) {
  uint64_t checked_at;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = checked_at_.find(key);
    if (it == checked_at_.end()) return false;
    checked_at = it->second;
  }
  return watch_.Changes() == checked_at;
}

bool IncludeScanner::CheckAndWatch(const Digest& key, const Memo& memo) {
  // Watched first, then checked: a change after the check is an event,
  // one before it a stamp that differs.
  bool watched = false;
  uint64_t changes = 0;
  if (stats_done_.load() >= watch_after_stats_) {
    std::vector<std::string> files, dirs;
    for (const auto& [path, stamp] : memo.depends_on->files)
      files.push_back(path);
    for (const auto& [path, stamp] : memo.depends_on->dirs)
      dirs.push_back(path);
    for (const std::string& path : memo.depends_on->absent_files) {
      const std::string_view dir = DirName(path);
      dirs.push_back(dir.empty() ? "." : std::string(dir));
    }
    watched = watch_.Watch(files, dirs);
    changes = watch_.Changes();
  }
  stamp_checks_.fetch_add(1);
  // Every stat StillValid makes counts, the absent files' too: a memo moved
  // from another place, or kept on disk, lists each absence one by one
  // (hundreds for a CUB program).
  stats_done_.fetch_add(memo.depends_on->files.size() +
                        memo.depends_on->dirs.size() +
                        memo.depends_on->absent_files.size());
  if (!StillValid(memo)) return false;
  if (watched) {
    std::lock_guard<std::mutex> lock(mu_);
    checked_at_[key] = changes;
  }
  return true;
}

PlainStatusOr<std::shared_ptr<const ScanResult>> IncludeScanner::Scan(
    const ScanInput& input) {
  const Digest scan_key = ScanKey(input);
  std::shared_ptr<const Memo> last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memos_.find(scan_key);
    if (it != memos_.end()) last = it->second;
  }
  if (last != nullptr &&
      (UnchangedSinceChecked(scan_key) || CheckAndWatch(scan_key, *last))) {
    return last->result;
  }
  if (!memo_dir_.empty()) {
    if (std::shared_ptr<const Memo> kept = LoadMemo(scan_key);
        kept != nullptr && CheckAndWatch(scan_key, *kept)) {
      std::lock_guard<std::mutex> lock(mu_);
      memos_[scan_key] = kept;
      return kept->result;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    checked_at_.erase(scan_key);
  }
  const std::optional<Digest> movable_key = MovableKey(input);
  if (movable_key.has_value()) {
    if (std::shared_ptr<const Memo> here = MovedHere(input, *movable_key)) {
      moves_.fetch_add(1);
      Remember(scan_key, here);
      SaveKeptFiles();
      return here->result;
    }
  }
  walks_.fetch_add(1);
  PlainStatusOr<std::shared_ptr<const ScanResult>> result =
      Walk(input, scan_key, movable_key);
  SaveKeptFiles();
  return result;
}

std::shared_ptr<const IncludeScanner::Memo> IncludeScanner::MovedHere(
    const ScanInput& input, const Digest& movable_key) {
  std::shared_ptr<const MovableMemo> moved = FindMovable(movable_key);
  return moved == nullptr ? nullptr : MoveHere(input, *moved);
}

void IncludeScanner::Remember(const Digest& key,
                              std::shared_ptr<const Memo> memo) {
  if (!memo->cacheable) return;
  if (!memo_dir_.empty()) SaveMemo(key, *memo);
  std::lock_guard<std::mutex> lock(mu_);
  if (memos_.size() >= kMaxMemos) {
    memos_.clear();
    checked_at_.clear();
  }
  checked_at_.erase(key);
  memos_[key] = std::move(memo);
}

// One walk: from the program's text (and -include), every file the
// preprocessor may open, followed the way it searches, then the macro
// #includes with the #defines seen, until nothing new turns up. Each step
// is a method; the state they share is below.
class IncludeScanner::Walker {
 public:
  Walker(IncludeScanner& scanner, const ScanInput& input)
      : scanner_(scanner),
        input_(input),
        roots_(RootsOf(input)),
        memo_(std::make_shared<Memo>()) {
    for (const std::string& d : input_.defines) {
      const size_t eq = d.find('=');
      if (eq == std::string::npos) {
        defines_[d].push_back("1");
      } else {
        defines_[d.substr(0, eq)].push_back(d.substr(eq + 1));
      }
    }
  }

  // The scan's answer; memo() is what must not change for it to hold.
  PlainStatusOr<std::shared_ptr<ScanResult>> Run() {
    if (PlainStatus s = StartWithTheProgram(); !s.ok()) return s;
    for (;;) {
      if (PlainStatus s = FollowQueuedDirectives(); !s.ok()) return s;
      bool found_more = false;
      if (PlainStatus s = FollowMacroIncludes(&found_more); !s.ok()) return s;
      if (!found_more) break;
    }
    if (!probe_error_.ok()) return probe_error_;
    if (PlainStatus s = CheckDirectoriesPassed(); !s.ok()) return s;
    return Result();
  }

  std::shared_ptr<Memo> memo() const { return memo_; }
  // Whether every absolute name the files spelled lies outside the place
  // (movable_scan.cc), and each spelling a file outside the toolkit was
  // opened by.
  bool literals_movable() const { return literals_movable_; }
  const std::vector<std::string>& opened() const { return opened_; }

 private:
  // Where a file was found: its directory's index (-1 for the program and
  // in-memory headers), for #include_next and for what is sent.
  struct Origin {
    std::string path;  // "" for the program and in-memory headers
    int dir = -1;
    std::string_view memory_name;  // in-memory header or program name
  };

  // The program's text, then its -include files, as NVRTC reads them.
  // And the file the program's name names, where there is one: NVRTC
  // stats it and writes its time and size into line information, so the
  // compile's view must hold it as the caller has it.
  PlainStatus StartWithTheProgram() {
    struct stat st;
    const std::string own_file = JoinSpelled(input_.cwd, input_.program_name);
    if (Probe(own_file, &st, /*by_directory=*/false)) {
      if (PlainStatus s = Found(own_file, -1, st); !s.ok()) return s;
    } else {
      memo_->depends_on->absent_files.push_back(own_file);
    }
    EnqueueText(Origin{"", -1, input_.program_name}, input_.source);
    std::vector<Directive> pre;
    for (const std::string& p : input_.pre_includes) {
      pre.push_back({Directive::kQuote, p});
    }
    queue_.emplace_back(
        Origin{"", -1, input_.program_name},
        std::make_shared<const std::vector<Directive>>(std::move(pre)));
    return PlainStatus();
  }

  // Every queued file's plain directives; macro #includes wait for the
  // #defines of all the files found.
  PlainStatus FollowQueuedDirectives() {
    while (!queue_.empty()) {
      auto [origin, directives] = std::move(queue_.front());
      queue_.pop_front();
      for (const Directive& d : *directives) {
        if (d.kind == Directive::kMacro) {
          macros_.emplace_back(origin, d);
          continue;
        }
        if (PlainStatus s = Resolve(origin, d.kind, d.text); !s.ok()) {
          return s;
        }
      }
    }
    return PlainStatus();
  }

  // Macro #includes, with every #define seen so far; a file they add may
  // define more, so the walk goes round until nothing new is found.
  PlainStatus FollowMacroIncludes(bool* found_more) {
    const size_t files_before = seen_files_.size() + seen_memory_.size();
    std::string unnamed;  // a macro #include that names no header yet
    for (const auto& [origin, d] : macros_) {
      std::unordered_set<std::string> expansions;
      const std::string where =
          origin.path.empty() ? std::string(origin.memory_name) : origin.path;
      if (!Expansions(d.text, defines_, &expansions)) {
        return PlainStatus::Error(
            text::Cat("#include ", d.text, " in ", where,
                      " has too many possible expansions"));
      }
      bool named = false;
      for (const std::string& e : expansions) {
        bool angle = false;
        std::string name;
        if (!TakeHeaderName(text::StripWhitespace(e), &angle, &name)) {
          continue;
        }
        named = true;
        if (!macros_done_.insert(text::Cat(where, "\n", e)).second) {
          continue;
        }
        if (PlainStatus s = Resolve(
                origin, angle ? Directive::kAngle : Directive::kQuote, name);
            !s.ok()) {
          return s;
        }
      }
      if (!named && unnamed.empty()) {
        unnamed = text::Cat("#include ", d.text, " in ", where);
      }
    }
    *found_more = !queue_.empty() ||
                  seen_files_.size() + seen_memory_.size() != files_before;
    if (!*found_more && !unnamed.empty()) {
      return PlainStatus::Error(text::Cat(
          unnamed, " names no header that the #defines seen can make"));
    }
    return PlainStatus();
  }

  // The file an in-memory header's name names (NAME from the working
  // directory, or NAME itself when absolute), as for the program's own
  // name: NVRTC compiles the text it was given, but stats that file and
  // writes its time and size into line information (-lineinfo, -G). So the
  // compile's view must hold it as the caller has it, and its absence is
  // a dependence too.
  PlainStatus TheFileAMemoryHeaderNames(const std::string& name) {
    struct stat st;
    const std::string file = JoinSpelled(input_.cwd, name);
    if (Probe(file, &st, /*by_directory=*/false)) return Found(file, -1, st);
    memo_->depends_on->absent_files.push_back(file);
    return PlainStatus();
  }

  // Where the preprocessor looks for `name` from `from`, in its order: an
  // in-memory header, an absolute path, beside the includer (quotes), then
  // the search directories (from the next one, for #include_next).
  PlainStatus Resolve(const Origin& from, Directive::Kind kind,
                      const std::string& name) {
    if (name.empty()) return PlainStatus();
    const bool next =
        kind == Directive::kAngleNext || kind == Directive::kQuoteNext;
    const bool quote =
        kind == Directive::kQuote || kind == Directive::kQuoteNext;
    if (!next) {
      for (size_t i = 0; i < input_.header_names.size(); ++i) {
        if (input_.header_names[i] != name) continue;
        if (seen_memory_.insert(input_.header_names[i]).second) {
          if (PlainStatus s = TheFileAMemoryHeaderNames(name); !s.ok()) {
            return s;
          }
          EnqueueText(Origin{"", -1, input_.header_names[i]},
                      input_.header_bodies[i]);
        }
        return PlainStatus();
      }
    }
    struct stat st;
    if (name[0] == '/') {
      // An absolute name stays where it is when the place moves: in the
      // place, it would not name what moving says.
      if (roots_.has_value() && AnchorSpelled(*roots_, name) != name) {
        literals_movable_ = false;
      }
      if (!Probe(name, &st)) return probe_error_;
      return Found(name, -1, st);
    }
    if (quote && !next) {
      // Next to the including file; for the program (or -include), next to
      // its name, from the working directory.
      const std::string spelled =
          from.path.empty()
              ? JoinSpelled(JoinSpelled(input_.cwd, DirName(from.memory_name)),
                            name)
              : JoinSpelled(DirName(from.path), name);
      if (Probe(spelled, &st)) return Found(spelled, from.dir, st);
    }
    const int start = next ? from.dir + 1 : 0;
    for (int i = std::max(start, 0); i < static_cast<int>(input_.dirs.size());
         ++i) {
      const SearchDir& d = input_.dirs[i];
      const std::string spelled = JoinSpelled(
          JoinSpelled(input_.cwd, d.spelled.empty() ? d.path : d.spelled),
          name);
      if (Probe(spelled, &st)) return Found(spelled, i, st);
    }
    // Not there: not there for the daemon either (unless the scan could
    // not tell).
    return probe_error_;
  }

  // Each path is looked at once per scan; a header included from a hundred
  // files costs one stat. The kernel resolves the path as spelled (".."
  // after a link goes up from the link's target); `path` is its lexical
  // form. What the scan cannot tell apart from absent (a link loop, a
  // directory it may not search) is an error: the compile must not guess.
  bool Probe(const std::string& spelled, struct stat* st,
             bool by_directory = true) {
    auto [it, inserted] = probed_.try_emplace(spelled);
    if (inserted) {
      struct stat s;
      if (::stat(spelled.c_str(), &s) == 0) {
        if (S_ISREG(s.st_mode)) it->second = s;
      } else if (errno != ENOENT && errno != ENOTDIR) {
        if (probe_error_.ok()) {
          probe_error_ =
              PlainStatus::Error(text::Cat("cannot tell whether ", spelled,
                                           " exists: ", std::strerror(errno)));
        }
      }
      if (!it->second) {
        memo_->depends_on->absent.push_back(spelled);
        if (by_directory) NoteAbsent(JoinNormal("", spelled));
      }
    }
    if (!it->second) return false;
    *st = *it->second;
    return true;
  }

  // An absent path stays absent while the deepest directory on its way
  // that exists does not change.
  void NoteAbsent(const std::string& path) {
    std::string_view up = path;
    for (;;) {
      up = DirName(up);
      const std::string dir = up.empty() ? "." : std::string(up);
      if (!memo_dirs_.insert(dir).second) return;
      struct stat st;
      if (::stat(dir.c_str(), &st) == 0) {
        const FileStamp stamp = StampOf(st);
        if (scanner_.Racy(stamp)) memo_->cacheable = false;
        memo_->depends_on->dirs.emplace_back(dir, stamp);
        return;
      }
      if (dir == "." || dir == "/") return;
    }
  }

  // A file found: checked, read (or taken from the cache) and queued.
  PlainStatus Found(const std::string& spelled, int dir,
                    const struct stat& st) {
    if (!seen_spelled_.insert(spelled).second) return PlainStatus();
    const std::string path = JoinNormal("", spelled);
    const SearchDir* owner = DirOf(path);
    const bool toolkit = owner != nullptr && owner->toolkit;
    // A toolkit file is recorded nowhere a move checks: a spelling of one
    // that moves with the place would reach something else elsewhere.
    if (toolkit && roots_.has_value() &&
        AnchorSpelled(*roots_, spelled) != spelled) {
      literals_movable_ = false;
    }
    if (!toolkit) {
      // The daemon lays the file out at this path: through a symbolic
      // link the compile would find nothing, or another file.
      // (Without a link on the way, the kernel's path is the lexical one.)
      std::string error;
      std::optional<std::string> real = ResolvePath(spelled, nullptr, &error);
      if (!real.has_value()) return PlainStatus::Error(error);
      if (*real != path) {
        return PlainStatus::Error(text::Cat("the program includes ", spelled,
                                            " through a symbolic link (", *real,
                                            ")"));
      }
      for (std::string& d : DirectoriesBeforeDotDot(spelled)) {
        passed_dirs_.insert(std::move(d));
      }
      opened_.push_back(spelled);
    }
    if (!seen_files_.insert(path).second) return PlainStatus();
    const FileStamp stamp = StampOf(st);
    PlainStatusOr<std::shared_ptr<const FileInfo>> info =
        scanner_.Load(path, stamp);
    if (!info.ok()) return info.status();
    // The toolkit is the daemon's, fingerprinted in the scan's key and in
    // every compile's: its files need no stamps checked on each hit (a CUB
    // program has hundreds).
    if (!toolkit) {
      memo_->depends_on->files.emplace_back(path, stamp);
      if (!(*info)->cacheable) {
        memo_->cacheable = false;
        memo_->depends_on->files_settled = false;
      }
      out_.push_back({path, (*info)->digest, stamp.mtime_ns});
    }
    for (const Define& d : (*info)->defines) defines_[d.name].push_back(d.body);
    queue_.emplace_back(Origin{path, dir, {}},
                        std::shared_ptr<const std::vector<Directive>>(
                            *info, &(*info)->directives));
    return PlainStatus();
  }

  // The directory the file at `path` belongs to: the longest that holds it.
  const SearchDir* DirOf(const std::string& path) const {
    const SearchDir* best = nullptr;
    for (const SearchDir& dir : input_.dirs) {
      if (IsUnder(path, dir.path, /*or_equal=*/false) &&
          (best == nullptr || dir.path.size() > best->path.size())) {
        best = &dir;
      }
    }
    return best;
  }

  void EnqueueText(Origin origin, std::string_view text) {
    std::vector<Directive> directives;
    std::vector<Define> file_defines;
    Parse(text, &directives, &file_defines);
    for (Define& d : file_defines) {
      defines_[d.name].push_back(std::move(d.body));
    }
    queue_.emplace_back(
        std::move(origin),
        std::make_shared<const std::vector<Directive>>(std::move(directives)));
  }

  // Directories that opens went through before a "..": the compile's view
  // has them only if a file sent or the working directory lies in them.
  PlainStatus CheckDirectoriesPassed() const {
    for (const std::string& d : passed_dirs_) {
      const bool seen =
          IsUnder(input_.cwd, d, /*or_equal=*/true) ||
          std::any_of(out_.begin(), out_.end(), [&](const ScannedFile& f) {
            return IsUnder(f.path, d, /*or_equal=*/false);
          });
      if (!seen) {
        return PlainStatus::Error(
            text::Cat("the program reaches a header through ", d,
                      "/.., a directory none of its files is in"));
      }
    }
    return PlainStatus();
  }

  // The files by path and the set's digest.
  std::shared_ptr<ScanResult> Result() {
    std::sort(out_.begin(), out_.end(),
              [](const ScannedFile& a, const ScannedFile& b) {
                return a.path < b.path;
              });
    auto result = std::make_shared<ScanResult>();
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    for (const ScannedFile& f : out_) {
      pairs.emplace_back(f.path, f.digest.AsBytes());
    }
    result->set = IncludedSetDigest(std::move(pairs));
    result->files = std::move(out_);
    return result;
  }

  IncludeScanner& scanner_;
  const ScanInput& input_;
  const std::optional<PlaceRoots> roots_;
  bool literals_movable_ = true;
  std::vector<std::string> opened_;
  std::unordered_map<std::string, std::vector<std::string>> defines_;
  std::vector<ScannedFile> out_;
  std::shared_ptr<Memo> memo_;
  std::unordered_set<std::string> memo_dirs_;
  std::unordered_map<std::string, std::optional<struct stat>> probed_;
  PlainStatus probe_error_;
  std::unordered_set<std::string> passed_dirs_;
  std::unordered_set<std::string> seen_spelled_;
  std::unordered_set<std::string> seen_files_;
  std::unordered_set<std::string_view> seen_memory_;
  std::deque<std::pair<Origin, std::shared_ptr<const std::vector<Directive>>>>
      queue_;
  std::vector<std::pair<Origin, Directive>> macros_;
  std::unordered_set<std::string> macros_done_;
};

PlainStatusOr<std::shared_ptr<const ScanResult>> IncludeScanner::Walk(
    const ScanInput& input, const Digest& key,
    const std::optional<Digest>& movable_key) {
  Walker walker(*this, input);
  PlainStatusOr<std::shared_ptr<ScanResult>> result = walker.Run();
  if (!result.ok()) return result.status();
  std::shared_ptr<Memo> memo = walker.memo();
  memo->depends_on->opened = walker.opened();
  memo->depends_on->moves_with_place =
      movable_key.has_value() && walker.literals_movable();
  (*result)->depends_on = memo->depends_on;
  if (memo->cacheable) {
    memo->result = *result;
    if (movable_key.has_value()) {
      if (std::optional<MovableMemo> movable = TakeOutPlace(input, *memo)) {
        KeepMovable(*movable_key,
                    std::make_shared<MovableMemo>(*std::move(movable)));
      }
    }
    Remember(key, std::move(memo));
  }
  return std::shared_ptr<const ScanResult>(*std::move(result));
}

}  // namespace jitcache::internal
