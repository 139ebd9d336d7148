#ifndef JITCACHE_CLIENT_CLI_DIRECT_MEMO_H_
#define JITCACHE_CLIENT_CLI_DIRECT_MEMO_H_

// Direct-mode memos: what lets the `jitcache` front end (nothing but libc
// and libstdc++ loaded, no include scanner) answer a `compile` hit.
//
// A compile's key covers every file its program may include (the client's
// include scan) and the working directory, so the front end cannot build
// the key's request itself. jitcache-full, after a compile the daemon
// answered, keeps a memo: the command's request as the front end builds it
// (the source and headers as read), the working directory, the daemon's
// toolkit, the request jitcache-full sent (keyed: includes resolved), the
// stamps of every file its include scan read and every path it found
// absent. (Not the stamps of directories, as the scanner keeps: writing
// the output next to the program would move them every time.)
// The front end asks that same request only while all of these still
// match; anything else (a memo absent, another toolkit, one stamp that
// differs) goes to jitcache-full, which scans again. Memos live under the
// user's scan cache (private to the user, like the scan memos).
//
// Pure functions but for the file system; any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/cli/compile_flags.h"
#include "client/wire/compile_wire.h"
#include "common/file_stamp.h"

namespace jitcache::cli {

// A stamp no file has (no inode 0, no time before 1970): a memo's file
// with it is always checked by its bytes.
inline constexpr FileStamp kUntrustedStamp{0, 0, 0, -1, -1};

struct DirectMemo {
  std::string asked;  // compile_wire::Encode of the front end's request
  std::string cwd;
  std::string toolkit_fingerprint;
  std::vector<std::pair<std::string, FileStamp>> files;  // regular files
  // Paths the scan looked up and found no regular file at.
  std::vector<std::string> absent;
  std::string request;  // the serialized, keyed CompileRequest
};

// The request the front end builds for a `compile` command: its flags, the
// program's source and the --header files' contents as read, in order.
// The options as jitcache-full sends them: -arch first.
compile_wire::Request FrontRequest(
    const CompileFlags& flags, std::string source,
    std::vector<std::pair<std::string, std::string>> headers);

// Where the memo of `asked` in `cwd` against the daemon at `socket` lives
// under the scan cache directory `scan_cache` ("" for nowhere).
std::string DirectMemoDir(const std::string& scan_cache);
std::string DirectMemoName(std::string_view socket, std::string_view cwd,
                           std::string_view asked);

std::string EncodeDirectMemo(const DirectMemo& memo);
// nullopt for anything but a whole memo of this format.
std::optional<DirectMemo> DecodeDirectMemo(std::string_view bytes);

// Whether every file still has its stamp and every absent path is still
// no regular file (stat, which follows symbolic links, as the scan did).
bool StampsHold(const DirectMemo& memo);

// A memo without its place (common/place_anchor.h): what lets the front
// end answer the same command from a new working directory with the same
// files (a second checkout, a job's own directory) by checking their bytes
// there, rather than handing it to jitcache-full for a scan. Only for a
// program named relative to the working directory (the command line's
// file name), whose layout the name itself says.
struct MovableDirectMemo {
  struct File {
    std::string anchored;
    std::string sha256_hex;
    FileStamp stamp;  // trusted for a file outside the place that keeps it
  };
  std::string asked;
  std::string program_name;
  std::string toolkit_fingerprint;
  // The keyed request without its working directory and its files' times,
  // which MoveHere appends for the new place.
  std::string request_without_place;
  std::vector<File> files;  // in the order of their anchored paths
  // Every spelling a file was opened by, and every path found absent.
  std::vector<std::string> opened;
  std::vector<std::string> absent;
};

// Where the movable memo of `asked` against `socket` lives (in
// DirectMemoDir, beside the places' own memos).
std::string MovableDirectMemoName(std::string_view socket,
                                  std::string_view asked);
std::string EncodeMovableDirectMemo(const MovableDirectMemo& memo);
std::optional<MovableDirectMemo> DecodeMovableDirectMemo(
    std::string_view bytes);

// `memo` (kept for `program_name` in memo.cwd) without its place, given the
// digest of each of its files (lower-case hex, by path), the spellings its
// files were opened by, and the paths its options name (-I directories and
// -include files, as spelled); nullopt when a path does not move with the
// place. The memo is found by the command as typed, so its options must
// mean the same place-relative paths anywhere: an absolute one into the
// place, or a relative one that climbs out of it or passes a symbolic
// link (one into the toolkit included), does not.
struct OptionPaths {
  std::vector<std::string> search_dirs;
  std::vector<std::string> pre_includes;
};
std::optional<MovableDirectMemo> TakeOutPlace(
    const DirectMemo& memo, std::string_view program_name,
    const std::vector<std::pair<std::string, std::string>>& digests,
    const std::vector<std::string>& opened, const OptionPaths& options,
    std::string request_without_place);

// `moved` in `cwd`, as a memo of that place: when every file there has the
// memo's bytes, no path a file was opened by goes through a symbolic link,
// and every absent path is absent there; nullopt otherwise. `settled`:
// whether no file there changed too recently to be trusted by its stamp
// next time (the memo may then be kept as `cwd`'s own).
std::optional<DirectMemo> MoveHere(const MovableDirectMemo& moved,
                                   const std::string& cwd, bool* settled);

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_DIRECT_MEMO_H_
