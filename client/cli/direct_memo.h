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
#include "client/cli/hit_wire.h"
#include "common/file_stamp.h"

namespace jitcache::cli {

struct DirectMemo {
  std::string asked;  // hit_wire::Encode of the front end's request
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
hit_wire::Request FrontRequest(
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

}  // namespace jitcache::cli

#endif  // JITCACHE_CLIENT_CLI_DIRECT_MEMO_H_
