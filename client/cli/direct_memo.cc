#include "client/cli/direct_memo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>

#include "client/wire/proto_wire.h"
#include "common/compile_options.h"
#include "common/digest.h"
#include "common/place_anchor.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache::cli {
namespace {

// Memos of another format are ignored (a newer front end never trusts an
// older jitcache-full's memo, nor the reverse).
constexpr std::string_view kMagic = "jitcache-direct-memo-1\n";
constexpr std::string_view kMovableMagic = "jitcache-movable-direct-memo-1\n";
// CompileRequest's fields that hold the place.
constexpr int kWorkingDirectoryField = wire::CompileRequest::kWorkingDirectory;
constexpr int kIncludedMtimesField = wire::CompileRequest::kIncludedMtimesNs;
// A file changed this recently may change again without its stamp moving
// (as IncludeScanner's).
constexpr int64_t kSettleNs = 2'000'000'000;

void PutU64(std::string& out, uint64_t v) {
  char bytes[8];
  std::memcpy(bytes, &v, 8);
  out.append(bytes, 8);
}

void PutString(std::string& out, std::string_view s) {
  PutU64(out, s.size());
  out.append(s);
}

void PutStrings(std::string& out, const std::vector<std::string>& strings) {
  PutU64(out, strings.size());
  for (const std::string& s : strings) PutString(out, s);
}

void PutStamps(std::string& out,
               const std::vector<std::pair<std::string, FileStamp>>& stamps) {
  PutU64(out, stamps.size());
  for (const auto& [path, s] : stamps) {
    PutString(out, path);
    PutU64(out, s.dev);
    PutU64(out, s.ino);
    PutU64(out, s.size);
    PutU64(out, static_cast<uint64_t>(s.mtime_ns));
    PutU64(out, static_cast<uint64_t>(s.ctime_ns));
  }
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  bool done() const { return rest_.empty(); }
  bool U64(uint64_t* v) {
    if (rest_.size() < 8) return false;
    std::memcpy(v, rest_.data(), 8);
    rest_.remove_prefix(8);
    return true;
  }
  bool String(std::string* s) {
    uint64_t n = 0;
    if (!U64(&n) || n > rest_.size()) return false;
    s->assign(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return true;
  }
  bool Stamps(std::vector<std::pair<std::string, FileStamp>>* out) {
    uint64_t n = 0;
    // Each entry takes at least 48 bytes: a count beyond that is damage.
    if (!U64(&n) || n > rest_.size() / 48) return false;
    out->resize(n);
    for (auto& [path, s] : *out) {
      uint64_t mtime = 0, ctime = 0;
      if (!String(&path) || !U64(&s.dev) || !U64(&s.ino) || !U64(&s.size) ||
          !U64(&mtime) || !U64(&ctime)) {
        return false;
      }
      s.mtime_ns = static_cast<int64_t>(mtime);
      s.ctime_ns = static_cast<int64_t>(ctime);
    }
    return true;
  }
  bool Strings(std::vector<std::string>* out) {
    uint64_t n = 0;
    if (!U64(&n) || n > rest_.size() / 8) return false;
    out->resize(n);
    for (std::string& s : *out) {
      if (!String(&s)) return false;
    }
    return true;
  }
  bool Skip(std::string_view prefix) {
    if (rest_.substr(0, prefix.size()) != prefix) return false;
    rest_.remove_prefix(prefix.size());
    return true;
  }

 private:
  std::string_view rest_;
};

bool Settled(const FileStamp& stamp) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return StampNs(now) - std::max(stamp.mtime_ns, stamp.ctime_ns) >= kSettleNs;
}

// The file's bytes' digest, or "" when it cannot be read.
std::string DigestOfFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string data;
  char buffer[1 << 16];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  close(fd);
  if (n < 0) return "";
  return Digest::Of(data).Hex();
}

// Whether `spelled` leads to its lexical path with no symbolic link on the
// way (the scan refuses a file reached through one).
bool OpenedWithoutLink(const std::string& spelled) {
  char real[PATH_MAX];
  if (realpath(spelled.c_str(), real) == nullptr) return false;
  return LexicallyNormal(spelled) == real;
}

}  // namespace

compile_wire::Request FrontRequest(
    const CompileFlags& flags, std::string source,
    std::vector<std::pair<std::string, std::string>> headers) {
  static const std::map<std::string, int> kTargets = {
      {"ptx", wire::Target::kPtx},
      {"cubin", wire::Target::kCubin},
      {"ltoir", wire::Target::kLtoir},
      {"optixir", wire::Target::kOptixIr}};
  compile_wire::Request request;
  request.source = std::move(source);
  request.headers = std::move(headers);
  request.program_name =
      flags.program_name.empty()
          ? flags.file.substr(flags.file.find_last_of('/') + 1)
          : flags.program_name;
  request.name_expressions = flags.name_expressions;
  if (!flags.archs.empty())
    request.options.push_back("-arch=" + flags.archs[0]);
  request.options.insert(request.options.end(), flags.nvrtc_options.begin(),
                         flags.nvrtc_options.end());
  const auto target = kTargets.find(flags.target);
  request.target = target == kTargets.end() ? 0 : target->second;
  // What libjitcache adds for these targets (NvrtcOptionsFor), so that the
  // front end asks the key jitcache-full would.
  if (request.target == wire::Target::kLtoir &&
      !AsksForLtoIr(request.options)) {
    request.options.push_back("-dlto");
  }
  if (request.target == wire::Target::kOptixIr &&
      !AsksForOptixIr(request.options)) {
    request.options.push_back("-optix-ir");
  }
  return request;
}

std::string DirectMemoDir(const std::string& scan_cache) {
  return scan_cache.empty() ? "" : scan_cache + "/direct";
}

std::string DirectMemoName(std::string_view socket, std::string_view cwd,
                           std::string_view asked) {
  // FNV-1a over the length-prefixed parts: only a file name, since a memo
  // is used only when its own copies of all three match.
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::string_view s) {
    std::string prefixed;
    PutString(prefixed, s);
    for (unsigned char c : prefixed) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  };
  mix(socket);
  mix(cwd);
  mix(asked);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) name[i] = kHex[h & 15];
  return name;
}

std::string EncodeDirectMemo(const DirectMemo& memo) {
  std::string out(kMagic);
  PutString(out, memo.asked);
  PutString(out, memo.cwd);
  PutString(out, memo.toolkit_fingerprint);
  PutString(out, memo.request);
  PutStamps(out, memo.files);
  PutStrings(out, memo.absent);
  return out;
}

std::optional<DirectMemo> DecodeDirectMemo(std::string_view bytes) {
  DirectMemo memo;
  Reader in(bytes);
  if (!in.Skip(kMagic) || !in.String(&memo.asked) || !in.String(&memo.cwd) ||
      !in.String(&memo.toolkit_fingerprint) || !in.String(&memo.request) ||
      !in.Stamps(&memo.files) || !in.Strings(&memo.absent) || !in.done()) {
    return std::nullopt;
  }
  return memo;
}

bool StampsHold(const DirectMemo& memo) {
  for (const auto& [path, stamp] : memo.files) {
    if (!FileStampHolds(path, stamp)) return false;
  }
  for (const std::string& path : memo.absent) {
    if (!StillNoFile(path)) return false;
  }
  return true;
}

}  // namespace jitcache::cli

namespace jitcache::cli {

std::string MovableDirectMemoName(std::string_view socket,
                                  std::string_view asked) {
  // No working directory is relative: no place's memo has this name.
  return DirectMemoName(socket, "without its place", asked);
}

std::string EncodeMovableDirectMemo(const MovableDirectMemo& memo) {
  std::string out(kMovableMagic);
  PutString(out, memo.asked);
  PutString(out, memo.program_name);
  PutString(out, memo.toolkit_fingerprint);
  PutString(out, memo.request_without_place);
  std::vector<std::pair<std::string, FileStamp>> stamps;
  for (const MovableDirectMemo::File& f : memo.files) {
    stamps.emplace_back(f.anchored, f.stamp);
  }
  PutStamps(out, stamps);
  for (const MovableDirectMemo::File& f : memo.files) {
    PutString(out, f.sha256_hex);
  }
  PutStrings(out, memo.opened);
  PutStrings(out, memo.absent);
  return out;
}

std::optional<MovableDirectMemo> DecodeMovableDirectMemo(
    std::string_view bytes) {
  MovableDirectMemo memo;
  Reader in(bytes);
  std::vector<std::pair<std::string, FileStamp>> stamps;
  if (!in.Skip(kMovableMagic) || !in.String(&memo.asked) ||
      !in.String(&memo.program_name) || !in.String(&memo.toolkit_fingerprint) ||
      !in.String(&memo.request_without_place) || !in.Stamps(&stamps)) {
    return std::nullopt;
  }
  for (auto& [anchored, stamp] : stamps) {
    MovableDirectMemo::File file{std::move(anchored), "", stamp};
    if (!in.String(&file.sha256_hex)) return std::nullopt;
    memo.files.push_back(std::move(file));
  }
  if (!in.Strings(&memo.opened) || !in.Strings(&memo.absent) || !in.done()) {
    return std::nullopt;
  }
  return memo;
}

std::optional<MovableDirectMemo> TakeOutPlace(
    const DirectMemo& memo, std::string_view program_name,
    const std::vector<std::pair<std::string, std::string>>& digests,
    const std::vector<std::string>& opened, const OptionPaths& options,
    std::string request_without_place) {
  const std::optional<PlaceRoots> roots = MovableRoots(memo.cwd, program_name);
  if (!roots.has_value() || program_name.empty() || program_name[0] == '/') {
    return std::nullopt;
  }
  for (const std::string& dir : options.search_dirs) {
    if (!dir.empty() && dir[0] == '/') {
      // Stays where it is: it must not be in the place, nor above it.
      if (AnchorSpelled(*roots, dir) != dir ||
          HoldsARoot(*roots, LexicallyNormal(dir))) {
        return std::nullopt;
      }
      continue;
    }
    // Moves with the working directory: it must stay in it, with no link.
    const std::string spelled = memo.cwd + "/" + dir;
    if (!AnchorSpelled(*roots, spelled).has_value()) return std::nullopt;
    char real[PATH_MAX];
    if (realpath(spelled.c_str(), real) != nullptr &&
        LexicallyNormal(spelled) != real) {
      return std::nullopt;
    }
  }
  for (const std::string& file : options.pre_includes) {
    if (!file.empty() && file[0] == '/' &&
        AnchorSpelled(*roots, file) != file) {
      return std::nullopt;
    }
  }
  const std::map<std::string, std::string> digest_of(digests.begin(),
                                                     digests.end());
  MovableDirectMemo out;
  out.asked = memo.asked;
  out.program_name = std::string(program_name);
  out.toolkit_fingerprint = memo.toolkit_fingerprint;
  out.request_without_place = std::move(request_without_place);
  for (const auto& [path, stamp] : memo.files) {
    std::optional<std::string> anchored = AnchorSpelled(*roots, path);
    auto digest = digest_of.find(path);
    if (!anchored.has_value() || digest == digest_of.end()) {
      return std::nullopt;
    }
    out.files.push_back({*std::move(anchored), digest->second, stamp});
  }
  std::sort(
      out.files.begin(), out.files.end(),
      [](const MovableDirectMemo::File& a, const MovableDirectMemo::File& b) {
        return a.anchored < b.anchored;
      });
  for (const auto& [list, into] :
       {std::pair{&opened, &out.opened}, {&memo.absent, &out.absent}}) {
    for (const std::string& spelled : *list) {
      std::optional<std::string> anchored = AnchorSpelled(*roots, spelled);
      if (!anchored.has_value()) return std::nullopt;
      into->push_back(*std::move(anchored));
    }
  }
  return out;
}

std::optional<DirectMemo> MoveHere(const MovableDirectMemo& moved,
                                   const std::string& cwd, bool* settled) {
  const std::optional<PlaceRoots> roots = MovableRoots(cwd, moved.program_name);
  if (!roots.has_value()) return std::nullopt;
  *settled = true;
  DirectMemo here;
  here.asked = moved.asked;
  here.cwd = cwd;
  here.toolkit_fingerprint = moved.toolkit_fingerprint;
  std::string mtimes;
  for (const MovableDirectMemo::File& file : moved.files) {
    std::string path = UnanchorSpelled(*roots, file.anchored);
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return std::nullopt;
    }
    const FileStamp stamp = StampOf(st);
    const bool trusted = stamp == file.stamp && Settled(stamp);
    if (!trusted && DigestOfFile(path) != file.sha256_hex) return std::nullopt;
    // A file whose stamp may still move is not trusted by it next time.
    if (!Settled(stamp)) *settled = false;
    proto_wire::PutVarint(mtimes, static_cast<uint64_t>(stamp.mtime_ns));
    here.files.emplace_back(std::move(path), stamp);
  }
  for (const std::string& anchored : moved.opened) {
    if (!OpenedWithoutLink(UnanchorSpelled(*roots, anchored))) {
      return std::nullopt;
    }
  }
  for (const std::string& anchored : moved.absent) {
    std::string path = UnanchorSpelled(*roots, anchored);
    if (!StillNoFile(path)) return std::nullopt;
    here.absent.push_back(std::move(path));
  }
  // Fields appended to a message are read as if they were in it; the
  // request was kept without these two.
  here.request = moved.request_without_place;
  proto_wire::PutBytes(here.request, kWorkingDirectoryField, cwd);
  if (!mtimes.empty()) {
    proto_wire::PutBytes(here.request, kIncludedMtimesField, mtimes);
  }
  return here;
}

}  // namespace jitcache::cli
