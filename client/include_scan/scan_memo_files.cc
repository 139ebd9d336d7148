// IncludeScanner's files on disk: whole scans remembered by their input
// (memos, and movable memos without their place) and the headers' digests
// by their stamps, so that another process
// of the same program need not read them again. A cache: written whole or
// not at all, ignored when unreadable or of another format.
//
// Their format is proto/jitcache/v1/scan_memo.proto's, written and read
// here by hand (client/wire/proto_wire.h): the include scan runs in
// libnvrtc.so.13, which loads no protobuf.
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/include_scan/include_scan.h"
#include "client/wire/proto_wire.h"
#include "common/fd_io.h"
#include "common/private_file.h"
#include "common/text.h"

namespace jitcache::internal {

namespace {

namespace wire = proto_wire;

// FileStampRecord's fields.
enum StampField { kPath = 1, kDev, kIno, kSize, kMtime, kCtime };

std::string StampRecord(const std::string& path,
                        const IncludeScanner::FileStamp& s) {
  std::string out;
  wire::PutBytes(out, kPath, path);
  wire::PutVarintField(out, kDev, s.dev);
  wire::PutVarintField(out, kIno, s.ino);
  wire::PutVarintField(out, kSize, s.size);
  wire::PutVarintField(out, kMtime, static_cast<uint64_t>(s.mtime_ns));
  wire::PutVarintField(out, kCtime, static_cast<uint64_t>(s.ctime_ns));
  return out;
}

bool ParseStamp(std::string_view bytes,
                std::pair<std::string, IncludeScanner::FileStamp>* out) {
  IncludeScanner::FileStamp& s = out->second;
  const auto as_i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  const auto as_u64 = [](uint64_t v) { return v; };
  return wire::ForEachField(
      bytes, [&](int field, int type, wire::Reader& in) -> std::optional<bool> {
        if (field == kPath && type == wire::kBytes)
          return in.Bytes(&out->first);
        if (type != wire::kVarint) return std::nullopt;
        switch (field) {
          case kDev:
            return wire::VarintInto(in, &s.dev, as_u64);
          case kIno:
            return wire::VarintInto(in, &s.ino, as_u64);
          case kSize:
            return wire::VarintInto(in, &s.size, as_u64);
          case kMtime:
            return wire::VarintInto(in, &s.mtime_ns, as_i64);
          case kCtime:
            return wire::VarintInto(in, &s.ctime_ns, as_i64);
          default:
            return std::nullopt;
        }
      });
}

// A repeated string or bytes field's next element.
bool AddString(wire::Reader& in, std::vector<std::string>* to) {
  return in.Bytes(&to->emplace_back());
}

// A repeated FileStampRecord field's next element.
bool AddStamp(
    wire::Reader& in,
    std::vector<std::pair<std::string, IncludeScanner::FileStamp>>* to) {
  std::string bytes;
  return in.Bytes(&bytes) && ParseStamp(bytes, &to->emplace_back());
}

// A repeated int32 field's next element or elements: packed (as protobuf
// writes it) or not.
bool AddInt32s(wire::Reader& in, int type, std::vector<int>* to) {
  if (type == wire::kVarint) return wire::Int32Into(in, &to->emplace_back());
  std::string packed;
  if (type != wire::kBytes || !in.Bytes(&packed)) return false;
  wire::Reader values(packed);
  while (!values.done()) {
    if (!wire::Int32Into(values, &to->emplace_back())) return false;
  }
  return true;
}

// The message in `name` under `dir`; nullopt when absent or unreadable.
std::optional<std::string> ReadKept(const std::string& dir,
                                    const std::string& name) {
  return ReadWholeFile((dir + "/" + name).c_str());
}

// Both formats go up whenever a scan finds other files for the same input
// (2: files beside the program, by absolute path, -include; directives
// behind comments, digraphs and continuations) or keeps more of what it
// found (3: the absent paths one by one; 4: the program's own file; 5: what
// moving it to another place needs), so that no memo of an older scanner
// answers for a newer one.
constexpr uint32_t kMemoFormat = 5;
constexpr uint32_t kFilesFormat = 2;  // see kMemoFormat
// Goes up whenever what a movable memo holds or means changes.
constexpr uint32_t kMovableFormat = 1;
// Headers kept on disk at most; past this the file starts again.
constexpr size_t kMaxKeptFiles = 50000;

std::string MovableFileName(const Digest& key) {
  return text::Cat("moved-", key.Hex());
}

}  // namespace

// ScanMemo's fields.
enum MemoField {
  kMemoFormatVersion = 1,
  kMemoFiles,
  kMemoDirs,
  kMemoResultPaths,
  kMemoResultSha256,
  kMemoSetSha256,
  kMemoAbsent,
  kMemoAbsentFiles,
  kMemoOpened,
  kMemoMovesWithPlace,
};

std::shared_ptr<const IncludeScanner::Memo> IncludeScanner::LoadMemo(
    const Digest& key) const {
  const std::optional<std::string> bytes = ReadKept(memo_dir_, key.Hex());
  if (!bytes.has_value()) return nullptr;
  auto memo = std::make_shared<Memo>();
  ScanDependencies& deps = *memo->depends_on;
  uint64_t format = 0, moves = 0;
  std::vector<std::string> paths, digests;
  std::string set_bytes;
  const bool parsed = wire::ForEachField(
      *bytes,
      [&](int field, int type, wire::Reader& in) -> std::optional<bool> {
        if (type == wire::kVarint && field == kMemoFormatVersion) {
          return in.Varint(&format);
        }
        if (type == wire::kVarint && field == kMemoMovesWithPlace) {
          return in.Varint(&moves);
        }
        if (type != wire::kBytes) return std::nullopt;
        switch (field) {
          case kMemoFiles:
            return AddStamp(in, &deps.files);
          case kMemoDirs:
            return AddStamp(in, &deps.dirs);
          case kMemoResultPaths:
            return AddString(in, &paths);
          case kMemoResultSha256:
            return AddString(in, &digests);
          case kMemoSetSha256:
            return in.Bytes(&set_bytes);
          case kMemoAbsent:
            return AddString(in, &deps.absent);
          case kMemoAbsentFiles:
            return AddString(in, &deps.absent_files);
          case kMemoOpened:
            return AddString(in, &deps.opened);
          default:
            return std::nullopt;
        }
      });
  if (!parsed || format != kMemoFormat || paths.size() != digests.size()) {
    return nullptr;
  }
  deps.moves_with_place = moves != 0;
  // Each file sent was read, so its time is among the stamps.
  std::unordered_map<std::string, int64_t> mtimes;
  for (const auto& [path, stamp] : deps.files) mtimes[path] = stamp.mtime_ns;
  auto result = std::make_shared<ScanResult>();
  for (size_t i = 0; i < paths.size(); ++i) {
    std::optional<Digest> d = Digest::FromBytes(digests[i]);
    auto mtime = mtimes.find(paths[i]);
    if (!d.has_value() || mtime == mtimes.end()) return nullptr;
    result->files.push_back({paths[i], *d, mtime->second});
  }
  std::optional<Digest> set = Digest::FromBytes(set_bytes);
  if (!set.has_value()) return nullptr;
  result->set = *set;
  result->depends_on = memo->depends_on;
  memo->result = std::move(result);
  return memo;
}

void IncludeScanner::SaveMemo(const Digest& key, const Memo& memo) const {
  const ScanDependencies& deps = *memo.depends_on;
  std::string out;
  wire::PutVarintField(out, kMemoFormatVersion, kMemoFormat);
  for (const auto& [path, stamp] : deps.files) {
    wire::PutBytes(out, kMemoFiles, StampRecord(path, stamp));
  }
  for (const auto& [path, stamp] : deps.dirs) {
    wire::PutBytes(out, kMemoDirs, StampRecord(path, stamp));
  }
  for (const ScannedFile& f : memo.result->files) {
    wire::PutBytes(out, kMemoResultPaths, f.path);
  }
  for (const ScannedFile& f : memo.result->files) {
    wire::PutBytes(out, kMemoResultSha256, f.digest.AsBytes());
  }
  wire::PutBytes(out, kMemoSetSha256, memo.result->set.AsBytes());
  for (const std::string& path : deps.absent) {
    wire::PutBytes(out, kMemoAbsent, path);
  }
  for (const std::string& path : deps.absent_files) {
    wire::PutBytes(out, kMemoAbsentFiles, path);
  }
  for (const std::string& spelled : deps.opened) {
    wire::PutBytes(out, kMemoOpened, spelled);
  }
  wire::PutVarintField(out, kMemoMovesWithPlace, deps.moves_with_place);
  KeepPrivateFile(memo_dir_, key.Hex(), out);
}

namespace {

// ScannedFiles's and ScannedFileRecord's fields.
enum FilesField { kFilesFormatVersion = 1, kFilesFiles };
enum FileField {
  kFileStamp = 1,
  kFileSha256,
  kFileDirectiveKinds,
  kFileDirectiveTexts,
  kFileDefineNames,
  kFileDefineBodies,
};

}  // namespace

std::shared_ptr<IncludeScanner::FileInfo> IncludeScanner::ParseFileInfo(
    std::string_view bytes, std::string* path) {
  std::vector<std::pair<std::string, IncludeScanner::FileStamp>> stamp;
  std::string digest;
  std::vector<int> kinds;
  std::vector<std::string> texts, names, bodies;
  const bool parsed = wire::ForEachField(
      bytes, [&](int field, int type, wire::Reader& in) -> std::optional<bool> {
        if (field == kFileDirectiveKinds) return AddInt32s(in, type, &kinds);
        if (type != wire::kBytes) return std::nullopt;
        switch (field) {
          case kFileStamp:
            return AddStamp(in, &stamp);
          case kFileSha256:
            return in.Bytes(&digest);
          case kFileDirectiveTexts:
            return AddString(in, &texts);
          case kFileDefineNames:
            return AddString(in, &names);
          case kFileDefineBodies:
            return AddString(in, &bodies);
          default:
            return std::nullopt;
        }
      });
  std::optional<Digest> d = Digest::FromBytes(digest);
  if (!parsed || stamp.size() != 1 || !d.has_value() ||
      kinds.size() != texts.size() || names.size() != bodies.size()) {
    return nullptr;
  }
  auto info = std::make_shared<IncludeScanner::FileInfo>();
  *path = std::move(stamp[0].first);
  info->stamp = stamp[0].second;
  info->cacheable = true;
  info->digest = *d;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < Directive::kQuote || kinds[i] > Directive::kMacro) continue;
    info->directives.push_back(
        {static_cast<Directive::Kind>(kinds[i]), std::move(texts[i])});
  }
  for (size_t i = 0; i < names.size(); ++i) {
    info->defines.push_back({std::move(names[i]), std::move(bodies[i])});
  }
  return info;
}

std::string IncludeScanner::FileInfoRecord(const std::string& path,
                                           const FileInfo& info) {
  std::string out;
  wire::PutBytes(out, kFileStamp, StampRecord(path, info.stamp));
  wire::PutBytes(out, kFileSha256, info.digest.AsBytes());
  if (!info.directives.empty()) {
    std::string packed;
    for (const IncludeScanner::Directive& d : info.directives) {
      wire::PutVarint(packed, static_cast<uint64_t>(d.kind));
    }
    wire::PutBytes(out, kFileDirectiveKinds, packed);
  }
  for (const IncludeScanner::Directive& d : info.directives) {
    wire::PutBytes(out, kFileDirectiveTexts, d.text);
  }
  for (const IncludeScanner::Define& d : info.defines) {
    wire::PutBytes(out, kFileDefineNames, d.name);
  }
  for (const IncludeScanner::Define& d : info.defines) {
    wire::PutBytes(out, kFileDefineBodies, d.body);
  }
  return out;
}

void IncludeScanner::LoadKeptFiles() {
  if (kept_files_loaded_ || memo_dir_.empty()) return;
  kept_files_loaded_ = true;
  const std::optional<std::string> bytes = ReadKept(memo_dir_, "files");
  if (!bytes.has_value()) return;
  uint64_t format = 0;
  std::vector<std::string> records;
  const bool parsed = wire::ForEachField(
      *bytes,
      [&](int field, int type, wire::Reader& in) -> std::optional<bool> {
        if (field == kFilesFormatVersion && type == wire::kVarint) {
          return in.Varint(&format);
        }
        if (field == kFilesFiles && type == wire::kBytes) {
          return AddString(in, &records);
        }
        return std::nullopt;
      });
  if (!parsed || format != kFilesFormat) return;
  for (const std::string& record : records) {
    std::string path;
    std::shared_ptr<FileInfo> info = ParseFileInfo(record, &path);
    if (info != nullptr) files_.try_emplace(std::move(path), std::move(info));
  }
}

void IncludeScanner::SaveKeptFiles() {
  std::string out;
  wire::PutVarintField(out, kFilesFormatVersion, kFilesFormat);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (memo_dir_.empty() || files_read_since_save_ == 0) return;
    files_read_since_save_ = 0;
    if (files_.size() > kMaxKeptFiles) files_.clear();
    for (const auto& [path, info] : files_) {
      if (!info->cacheable) continue;
      wire::PutBytes(out, kFilesFiles, FileInfoRecord(path, *info));
    }
  }
  KeepPrivateFile(memo_dir_, "files", out);
}

namespace {
// MovableScanMemo's fields.
enum MovableField {
  kMovableFormatVersion = 1,
  kMovableFiles,
  kMovableSha256,
  kMovableOpened,
  kMovableAbsent,
};
}  // namespace

std::shared_ptr<const IncludeScanner::MovableMemo> IncludeScanner::LoadMovable(
    const Digest& key) const {
  const std::optional<std::string> bytes =
      ReadKept(memo_dir_, MovableFileName(key));
  if (!bytes.has_value()) return nullptr;
  auto memo = std::make_shared<MovableMemo>();
  uint64_t format = 0;
  std::vector<std::pair<std::string, FileStamp>> files;
  std::vector<std::string> digests;
  const bool parsed = wire::ForEachField(
      *bytes,
      [&](int field, int type, wire::Reader& in) -> std::optional<bool> {
        if (field == kMovableFormatVersion && type == wire::kVarint) {
          return in.Varint(&format);
        }
        if (type != wire::kBytes) return std::nullopt;
        switch (field) {
          case kMovableFiles:
            return AddStamp(in, &files);
          case kMovableSha256:
            return AddString(in, &digests);
          case kMovableOpened:
            return AddString(in, &memo->opened);
          case kMovableAbsent:
            return AddString(in, &memo->absent);
          default:
            return std::nullopt;
        }
      });
  if (!parsed || format != kMovableFormat || files.size() != digests.size()) {
    return nullptr;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::optional<Digest> digest = Digest::FromBytes(digests[i]);
    if (!digest.has_value()) return nullptr;
    memo->files.push_back(
        {std::move(files[i].first), *digest, files[i].second});
  }
  return memo;
}

void IncludeScanner::SaveMovable(const Digest& key,
                                 const MovableMemo& memo) const {
  std::string out;
  wire::PutVarintField(out, kMovableFormatVersion, kMovableFormat);
  for (const MovableMemo::File& file : memo.files) {
    wire::PutBytes(out, kMovableFiles, StampRecord(file.anchored, file.stamp));
  }
  for (const MovableMemo::File& file : memo.files) {
    wire::PutBytes(out, kMovableSha256, file.digest.AsBytes());
  }
  for (const std::string& s : memo.opened) {
    wire::PutBytes(out, kMovableOpened, s);
  }
  for (const std::string& s : memo.absent) {
    wire::PutBytes(out, kMovableAbsent, s);
  }
  KeepPrivateFile(memo_dir_, MovableFileName(key), out);
}

}  // namespace jitcache::internal
