#include "client/cli/direct_memo.h"

#include <cstring>
#include <map>

namespace jitcache::cli {
namespace {

// Memos of another format are ignored (a newer front end never trusts an
// older jitcache-full's memo, nor the reverse).
constexpr std::string_view kMagic = "jitcache-direct-memo-1\n";

void PutU64(std::string& out, uint64_t v) {
  char bytes[8];
  std::memcpy(bytes, &v, 8);
  out.append(bytes, 8);
}

void PutString(std::string& out, std::string_view s) {
  PutU64(out, s.size());
  out.append(s);
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

}  // namespace

hit_wire::Request FrontRequest(
    const CompileFlags& flags, std::string source,
    std::vector<std::pair<std::string, std::string>> headers) {
  static const std::map<std::string, int> kTargets = {
      {"ptx", 1}, {"cubin", 2}, {"ltoir", 3}};
  hit_wire::Request request;
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
  PutU64(out, memo.absent.size());
  for (const std::string& path : memo.absent) PutString(out, path);
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
