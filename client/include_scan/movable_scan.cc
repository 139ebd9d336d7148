// A scan taken from one place to another (IncludeScanner::MovableMemo):
// CuPy names each program after a fresh temporary directory, and jobs run
// from directories of their own, so a scan keyed by its place would walk
// the whole include graph again in every new process. Kept in memory and on
// disk beside the place's own memos.
//
// Why a moved scan is the walk's answer: the walk's paths are the place's
// two directories, the search directories and the names the files spell,
// joined as text. Moving the place moves every path made from the first
// three by the same text, provided none climbs out of its root (".."), no
// search directory lies above a root, and no absolute name a file spells
// lies in one (AnchorSpelled and MovableKey refuse those). The walk then
// takes the same steps wherever each file found has the same bytes and
// each path found absent is absent, and no path it opened goes through a
// symbolic link: all three are checked here, path by path.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "client/include_scan/include_scan.h"
#include "common/cache_key.h"
#include "common/compile_place.h"
#include "common/file_stamp.h"
#include "common/place_anchor.h"
#include "common/plain_status.h"
#include "common/resolve_path.h"

namespace jitcache::internal {
namespace {

// Movable memos held in memory; past this many they start again.
constexpr size_t kMaxMovables = 64;

}  // namespace

std::optional<PlaceRoots> IncludeScanner::RootsOf(const ScanInput& input) {
  return MovableRoots(input.cwd, std::string_view(input.program_name.data(),
                                                  input.program_name.size()));
}

std::optional<Digest> IncludeScanner::MovableKey(const ScanInput& input) {
  const std::optional<PlaceRoots> roots = RootsOf(input);
  if (!roots.has_value()) return std::nullopt;
  const CompilePlace place(input.cwd, input.program_name);
  KeyHasher key(RequestKind::kCompile);
  key.Field(16, "scan without its place");
  key.Field(1, place.ProgramForKey());
  // Quoted includes resolve beside an in-memory header's name: an absolute
  // one in the place names the place as text.
  for (const std::string_view name : input.header_names) {
    if (!name.empty() && name[0] == '/' &&
        AnchorSpelled(*roots, std::string_view(name.data(), name.size())) !=
            std::string(name)) {
      return std::nullopt;
    }
  }
  KeyTheText(input, key);
  key.Count(10, input.dirs.size());
  for (const SearchDir& dir : input.dirs) {
    // A directory above a root reaches the place by a path that stays
    // where it is; the toolkit's must not move at all.
    if (HoldsARoot(*roots, dir.path)) return std::nullopt;
    const std::optional<std::string> path = AnchorSpelled(*roots, dir.path);
    const std::optional<std::string> spelled =
        AnchorSpelled(*roots, dir.spelled.empty() ? dir.path : dir.spelled);
    if (!path.has_value() || !spelled.has_value() ||
        (dir.toolkit && *path != dir.path)) {
      return std::nullopt;
    }
    key.Field(dir.toolkit ? 11 : 12, *path);
    key.Field(14, *spelled);
  }
  key.Field(15, input.toolkit_fingerprint);
  return key.Finish();
}

std::optional<IncludeScanner::MovableMemo> IncludeScanner::TakeOutPlace(
    const ScanInput& input, const Memo& memo) {
  const std::optional<PlaceRoots> roots = RootsOf(input);
  if (!memo.depends_on->moves_with_place || !roots.has_value()) {
    return std::nullopt;
  }
  std::unordered_map<std::string, FileStamp> stamps;
  for (const auto& [path, stamp] : memo.depends_on->files) {
    stamps[path] = stamp;
  }
  MovableMemo out;
  for (const ScannedFile& file : memo.result->files) {
    std::optional<std::string> anchored = AnchorSpelled(*roots, file.path);
    auto stamp = stamps.find(file.path);
    if (!anchored.has_value() || stamp == stamps.end()) return std::nullopt;
    out.files.push_back({*std::move(anchored), file.digest, stamp->second});
  }
  for (const std::string& spelled : memo.depends_on->opened) {
    std::optional<std::string> anchored = AnchorSpelled(*roots, spelled);
    if (!anchored.has_value()) return std::nullopt;
    // The walk lets an open go through "d/.." only where the compile's view
    // has d: a d above the place holds the working directory here, and
    // maybe not there.
    for (const std::string& passed : DirectoriesBeforeDotDot(spelled)) {
      if (HoldsARoot(*roots, passed)) return std::nullopt;
    }
    out.opened.push_back(*std::move(anchored));
  }
  for (const std::string& spelled : memo.depends_on->absent) {
    std::optional<std::string> anchored = AnchorSpelled(*roots, spelled);
    if (!anchored.has_value()) return std::nullopt;
    out.absent.push_back(*std::move(anchored));
  }
  return out;
}

std::shared_ptr<const IncludeScanner::Memo> IncludeScanner::MoveHere(
    const ScanInput& input, const MovableMemo& moved) {
  const std::optional<PlaceRoots> roots = RootsOf(input);
  if (!roots.has_value()) return nullptr;
  auto memo = std::make_shared<Memo>();
  ScanDependencies& deps = *memo->depends_on;
  deps.moves_with_place = true;
  auto result = std::make_shared<ScanResult>();
  for (const MovableMemo::File& file : moved.files) {
    std::string path = UnanchorSpelled(*roots, file.anchored);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return nullptr;
    }
    const FileStamp stamp = StampOf(st);
    if (stamp != file.stamp || Racy(stamp)) {
      PlainStatusOr<std::shared_ptr<const FileInfo>> info = Load(path, stamp);
      if (!info.ok() || (*info)->digest != file.digest) return nullptr;
      if (!(*info)->cacheable) {
        memo->cacheable = false;
        deps.files_settled = false;
      }
    }
    deps.files.emplace_back(path, stamp);
    result->files.push_back({std::move(path), file.digest, stamp.mtime_ns});
  }
  for (const std::string& anchored : moved.opened) {
    std::string spelled = UnanchorSpelled(*roots, anchored);
    std::string error;
    std::optional<std::string> real = ResolvePath(spelled, nullptr, &error);
    if (!real.has_value() || *real != LexicallyNormal(spelled)) return nullptr;
    deps.opened.push_back(std::move(spelled));
  }
  // Each absent path is checked by itself (the directories it was held by
  // are the other place's), and is held that way from now on.
  for (const std::string& anchored : moved.absent) {
    std::string path = UnanchorSpelled(*roots, anchored);
    if (!StillNoFile(path)) return nullptr;
    deps.absent.push_back(path);
    deps.absent_files.push_back(std::move(path));
  }
  std::sort(result->files.begin(), result->files.end(),
            [](const ScannedFile& a, const ScannedFile& b) {
              return a.path < b.path;
            });
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (const ScannedFile& f : result->files) {
    pairs.emplace_back(f.path, f.digest.AsBytes());
  }
  result->set = IncludedSetDigest(std::move(pairs));
  result->depends_on = memo->depends_on;
  memo->result = std::move(result);
  return memo;
}

std::shared_ptr<const IncludeScanner::MovableMemo> IncludeScanner::FindMovable(
    const Digest& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = movables_.find(key);
    if (it != movables_.end()) return it->second;
  }
  if (memo_dir_.empty()) return nullptr;
  std::shared_ptr<const MovableMemo> kept = LoadMovable(key);
  if (kept != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (movables_.size() >= kMaxMovables) movables_.clear();
    movables_[key] = kept;
  }
  return kept;
}

void IncludeScanner::KeepMovable(const Digest& key,
                                 std::shared_ptr<const MovableMemo> memo) {
  if (!memo_dir_.empty()) SaveMovable(key, *memo);
  std::lock_guard<std::mutex> lock(mu_);
  if (movables_.size() >= kMaxMovables) movables_.clear();
  movables_[key] = std::move(memo);
}

}  // namespace jitcache::internal
