#ifndef JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDE_SCAN_H_
#define JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDE_SCAN_H_

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "client/include_scan/change_watch.h"
#include "client/include_scan/directives.h"
#include "common/cache_key.h"
#include "common/digest.h"
#include "common/file_stamp.h"
#include "common/place_anchor.h"
#include "common/plain_status.h"

namespace jitcache::internal {

// One directory of a compile's include search, in NVRTC's order.
struct SearchDir {
  std::string path;      // absolute, lexically normal
  bool toolkit = false;  // the daemon's own headers: read, never sent
  // Absolute, as the options spell it ("/home/a/jump/.."): the kernel,
  // and so NVRTC, resolves ".." after a symbolic link where `path` does
  // not. Empty: `path`.
  std::string spelled;
};

struct ScanInput {
  std::string_view program_name;
  std::string_view source;
  // In-memory headers by the names #include uses; NVRTC looks there first.
  std::vector<std::string_view> header_names;
  std::vector<std::string_view> header_bodies;
  std::vector<std::string> pre_includes;  // --pre-include, in order
  std::vector<std::string> defines;       // -D values: NAME or NAME=VALUE
  std::vector<SearchDir> dirs;
  // Where relative names resolve (the caller's working directory).
  std::string cwd;
  // The daemon's toolchain fingerprint (which covers its include tree):
  // toolkit files are followed but never stamped, so a scan is remembered
  // per toolkit instead.
  std::string toolkit_fingerprint;
};

struct ScannedFile {
  std::string path;  // absolute, lexically normal, no symbolic link; not
                     // the toolkit's
  Digest digest;
  int64_t mtime_ns = 0;  // as the scan's stat saw it
};

// What must not have changed for a scan's answer to hold: every file it
// read, and every path it found absent. The absent ones are held two ways:
// by the nearest directory above each that exists (a stamp per directory,
// what the scanner checks), and one by one (what jitcache's front end
// checks: a file written next to the program does not move them). stat
// follows symbolic links for all.
struct ScanDependencies {
  std::vector<std::pair<std::string, FileStamp>> files;
  std::vector<std::pair<std::string, FileStamp>> dirs;
  std::vector<std::string> absent;  // as looked up (spelled)
  // Absent paths the scanner itself checks one by one rather than by their
  // directory's stamp (the program's own file: the directory it would be
  // in is where outputs are written); their directories are watched.
  std::vector<std::string> absent_files;
  // No file changed too recently to be trusted by its stamp.
  bool files_settled = true;
  // What taking the scan to another place needs (place_anchor.h): every
  // spelling a file outside the toolkit was opened by, and whether the
  // scan's paths move with the place (its input has a key without the
  // place, IncludeScanner::MovableKey, and every absolute name the files
  // spelled lies outside the place).
  std::vector<std::string> opened;
  bool moves_with_place = false;
};

struct ScanResult {
  std::vector<ScannedFile> files;  // sorted by path
  Digest set;                      // IncludedSetDigest of the files
  std::shared_ptr<const ScanDependencies> depends_on;
};

// Finds every file a program may include from its include directories, the
// way ccache's "direct mode" does without running the preprocessor: every
// #include, #include_next and __has_include of every file reached is
// followed, whatever #if says (so the set is a superset of what the
// compiler reads), each resolved as NVRTC would (in-memory headers first,
// then the including file's directory for "...", then the directories in
// order). An #include of a macro is resolved to every expansion that the
// object-like #defines seen anywhere in the scan (and -D) allow.
//
// Every file found counts, wherever it is: next to the program or in the
// working directory, by absolute path, through -include or an -I
// directory; and the file the program's name names, where there is one
// (NVRTC stats it for line information). Toolkit files are read but not
// returned (the daemon has them). What the daemon cannot reproduce is
// FAILED_PRECONDITION with the reason, so that the caller compiles with the
// real NVRTC instead: a path through a symbolic link (the daemon lays files out
// at their real paths), a macro that does not expand to a header name, or a
// file that cannot be read.
//
// Files are hashed once per process while their size, times and inode stay
// the same, and a whole scan is reused while none of the files it read
// changed and no directory where it found a path absent changed (a header
// created there would now be found): a repeated scan costs a stat per
// file. Scans are also kept on disk (DefaultScanCachePath, one small file
// per program and options, private to the user), so that a new process's
// first compile of a program scanned before costs the same stats, not
// reading and hashing every header; and every header read is kept there
// by its stamp, so that a new program's first scan reads only headers no
// scan read before. A file or directory changed in the
// last two seconds is not trusted this way, as its timestamps may not
// have moved yet. A scan is kept without its place as well, so that the
// same program scanned from a new working directory or under a new
// temporary name costs checking its files there, not a walk (MovableMemo).
//
// Thread-safety: Scan may be called from many threads at once.
class IncludeScanner {
 public:
  // `settle_ns`: how long ago a file must have changed to be trusted by
  // its stamp (two seconds in ForProcess; tests may use less). `memo_dir`:
  // where scans are kept for the next process ("" for nowhere).
  // `watch_after_stats`: how many stamps the process checks before it
  // starts watching directories instead (a watch costs as much as dozens
  // of stats to set up: a process that compiles a few times never pays
  // for it).
  explicit IncludeScanner(int64_t settle_ns = 2'000'000'000,
                          std::string memo_dir = "",
                          uint64_t watch_after_stats = kWatchAfterStats)
      : settle_ns_(settle_ns),
        memo_dir_(std::move(memo_dir)),
        watch_after_stats_(watch_after_stats) {}
  static constexpr uint64_t kWatchAfterStats = 20'000;

  static IncludeScanner& ForProcess();

  // The files under the non-toolkit directories.
  PlainStatusOr<std::shared_ptr<const ScanResult>> Scan(const ScanInput& input);

  // The real path of the include directory `dir` (absolute) when it is, or
  // lies in, one of `toolkit_dirs` (real paths): the daemon's own headers;
  // "" when it is not. Resolving it costs a system call per component (a
  // dozen for the toolkit's own spelling), so the answer is remembered, for
  // these toolkit directories, while the change watch says nothing was
  // created, removed or renamed in the directory of any symbolic link met
  // on the way (a link re-pointed is one of those: /usr/local/cuda,
  // /etc/alternatives/cuda) or on the way to either end: a warm process's
  // compile then costs one read of the watch's events. Where the watch
  // refuses, it is resolved every time.
  std::string ToolkitDirOf(const std::string& dir,
                           const std::vector<std::string>& toolkit_dirs);
  // Include directories resolved rather than remembered.
  uint64_t dirs_resolved() const { return dirs_resolved_.load(); }

  // Scans that walked the include graph, not answered from the last scan.
  uint64_t walks() const { return walks_.load(); }
  // Headers read (and hashed) rather than known by their stamp.
  uint64_t files_read() const { return files_read_.load(); }
  // Scans answered by a scan of the same program made in another place
  // (movable_scan.cc), its files checked here.
  uint64_t moves() const { return moves_.load(); }
  // Scans answered by checking every stamp of a remembered scan (not by
  // the change watch alone).
  uint64_t stamp_checks() const { return stamp_checks_.load(); }

  // Reads `path` and returns its current bytes; `digest` is their hash.
  static PlainStatusOr<std::string> Read(const std::string& path,
                                         Digest* digest);

  using FileStamp = jitcache::FileStamp;

  using Directive = internal::Directive;
  using Define = internal::Define;
  // The directives and object-like #defines of one file's text.
  static void Parse(std::string_view text, std::vector<Directive>* directives,
                    std::vector<Define>* defines);

 private:
  struct FileInfo {
    FileStamp stamp;
    bool cacheable = false;
    Digest digest;
    std::vector<Directive> directives;
    std::vector<Define> defines;
  };

  // A whole scan's answer, and what must not have changed for it to hold.
  struct Memo {
    std::shared_ptr<ScanDependencies> depends_on =
        std::make_shared<ScanDependencies>();
    bool cacheable = true;
    std::shared_ptr<const ScanResult> result;
  };

  // A scan's answer with its place taken out (place_anchor.h): a scan of
  // the same program from another place with the same layout (a new
  // working directory, a new temporary program name) is answered by
  // checking that every file found there has the same bytes and every
  // path found absent is absent there, rather than by walking the include
  // graph again. Each path is anchored as it was opened.
  struct MovableMemo {
    struct File {
      std::string anchored;  // lexically normal
      Digest digest;
      // Trusted for a file outside the place that keeps this stamp; any
      // other is read and hashed.
      FileStamp stamp;
    };
    std::vector<File> files;          // every file read (and sent)
    std::vector<std::string> opened;  // every spelling a file was opened by
    std::vector<std::string> absent;  // every path found absent
  };

  bool Racy(const FileStamp& stamp) const;
  // The roots of `input`'s place, when it can move (place_anchor.h).
  static std::optional<PlaceRoots> RootsOf(const ScanInput& input);
  static Digest ScanKey(const ScanInput& input);
  // The program's text in a scan's key: source, in-memory headers,
  // -include and -D (fields 2 to 9).
  static void KeyTheText(const ScanInput& input, KeyHasher& key);
  // The key of `input`'s scan without its place; nullopt when the place
  // cannot be taken out (movable_scan.cc says when).
  static std::optional<Digest> MovableKey(const ScanInput& input);
  // `memo` (of a walk in `input`'s place) without its place; nullopt when
  // a path it holds does not move with the place.
  static std::optional<MovableMemo> TakeOutPlace(const ScanInput& input,
                                                 const Memo& memo);
  // `moved` in `input`'s place, when every file and absence still holds
  // here; nullptr otherwise.
  std::shared_ptr<const Memo> MoveHere(const ScanInput& input,
                                       const MovableMemo& moved);
  // The movable memo of `key`, from memory or disk.
  std::shared_ptr<const MovableMemo> FindMovable(const Digest& key);
  void KeepMovable(const Digest& key, std::shared_ptr<const MovableMemo> memo);
  std::shared_ptr<const MovableMemo> LoadMovable(const Digest& key) const;
  void SaveMovable(const Digest& key, const MovableMemo& memo) const;
  static bool StillValid(const Memo& memo);
  // Whether `key`'s memo was checked by its stamps and nothing it depends
  // on has changed since, by the change watch.
  bool UnchangedSinceChecked(const Digest& key);
  // Watches what `memo` depends on, then checks its stamps; remembers the
  // moment of a check that held, for UnchangedSinceChecked.
  bool CheckAndWatch(const Digest& key, const Memo& memo);
  // The memo kept on disk for `key`, if any and readable.
  std::shared_ptr<const Memo> LoadMemo(const Digest& key) const;
  void SaveMemo(const Digest& key, const Memo& memo) const;
  // A scan from the files (their infos cached as Load says); kept as
  // `key`'s memo when nothing it saw changed too recently, and as
  // `movable_key`'s movable memo when its paths move with the place.
  PlainStatusOr<std::shared_ptr<const ScanResult>> Walk(
      const ScanInput& input, const Digest& key,
      const std::optional<Digest>& movable_key);
  // The movable memo of `movable_key` checked in `input`'s place; nullptr
  // when there is none or it does not hold here.
  std::shared_ptr<const Memo> MovedHere(const ScanInput& input,
                                        const Digest& movable_key);
  // Keeps `memo` as `key`'s, in memory and on disk, when it is cacheable.
  void Remember(const Digest& key, std::shared_ptr<const Memo> memo);
  // One walk's state and its steps (include_scan.cc).
  class Walker;

  // One header's record in the kept files (ScannedFileRecord), and back:
  // its path and what a scan knows of it; nullptr when malformed.
  static std::string FileInfoRecord(const std::string& path,
                                    const FileInfo& info);
  static std::shared_ptr<FileInfo> ParseFileInfo(std::string_view bytes,
                                                 std::string* path);
  // The headers kept on disk, read into files_ once (mu_ held).
  void LoadKeptFiles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes files_ to disk when a walk read headers that were not there.
  void SaveKeptFiles();

  // The file's info, from the cache while its stamp holds.
  PlainStatusOr<std::shared_ptr<const FileInfo>> Load(const std::string& path,
                                                      const FileStamp& stamp);

  const int64_t settle_ns_;
  const std::string memo_dir_;
  const uint64_t watch_after_stats_;
  std::atomic<uint64_t> stats_done_{0};
  std::atomic<uint64_t> walks_{0};
  std::atomic<uint64_t> files_read_{0};
  std::atomic<uint64_t> stamp_checks_{0};
  std::atomic<uint64_t> moves_{0};
  std::atomic<uint64_t> dirs_resolved_{0};
  ChangeWatch watch_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const FileInfo>> files_
      ABSL_GUARDED_BY(mu_);
  std::unordered_map<Digest, std::shared_ptr<const Memo>> memos_
      ABSL_GUARDED_BY(mu_);
  // ChangeWatch::Changes() when each memo's stamps were last found to hold.
  std::unordered_map<Digest, uint64_t> checked_at_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<Digest, std::shared_ptr<const MovableMemo>> movables_
      ABSL_GUARDED_BY(mu_);
  // ToolkitDirOf's answers, and the watch's count of changes when each
  // was resolved.
  struct ResolvedDir {
    std::string toolkit_dir;
    uint64_t changes = 0;
  };
  std::unordered_map<std::string, ResolvedDir> resolved_dirs_
      ABSL_GUARDED_BY(mu_);
  bool kept_files_loaded_ ABSL_GUARDED_BY(mu_) = false;
  size_t files_read_since_save_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace jitcache::internal

#endif  // JITCACHE_CLIENT_INCLUDE_SCAN_INCLUDE_SCAN_H_
