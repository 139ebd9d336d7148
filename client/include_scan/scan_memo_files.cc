// IncludeScanner's files on disk: whole scans remembered by their input
// (memos, and movable memos without their place) and the headers' digests
// by their stamps, so that another process
// of the same program need not read them again. A cache: written whole or
// not at all, ignored when unreadable or of another format.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "client/include_scan/include_scan.h"
#include "common/private_file.h"
#include "jitcache/v1/scan_memo.pb.h"

namespace jitcache::internal {

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

// Best effort: it is a cache.
void KeepFile(const std::string& dir, const std::string& name,
              const google::protobuf::Message& record) {
  KeepPrivateFile(dir, name, record.SerializeAsString());
}

std::string MovableFileName(const Digest& key) {
  return absl::StrCat("moved-", key.Hex());
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
  for (const auto& r : record.files())
    memo->depends_on->files.push_back(FromRecord(r));
  for (const auto& r : record.dirs())
    memo->depends_on->dirs.push_back(FromRecord(r));
  // Each file sent was read, so its time is among the stamps.
  absl::flat_hash_map<std::string, int64_t> mtimes;
  for (const auto& [path, stamp] : memo->depends_on->files) {
    mtimes[path] = stamp.mtime_ns;
  }
  auto result = std::make_shared<ScanResult>();
  for (int i = 0; i < record.result_paths_size(); ++i) {
    absl::StatusOr<Digest> d = Digest::FromBytes(record.result_sha256(i));
    auto mtime = mtimes.find(record.result_paths(i));
    if (!d.ok() || mtime == mtimes.end()) return nullptr;
    result->files.push_back({record.result_paths(i), *d, mtime->second});
  }
  absl::StatusOr<Digest> set = Digest::FromBytes(record.set_sha256());
  if (!set.ok()) return nullptr;
  result->set = *set;
  memo->depends_on->absent.assign(record.absent().begin(),
                                  record.absent().end());
  memo->depends_on->absent_files.assign(record.absent_files().begin(),
                                        record.absent_files().end());
  memo->depends_on->opened.assign(record.opened().begin(),
                                  record.opened().end());
  memo->depends_on->moves_with_place = record.moves_with_place();
  result->depends_on = memo->depends_on;
  memo->result = std::move(result);
  return memo;
}

void IncludeScanner::SaveMemo(const Digest& key, const Memo& memo) const {
  v1::ScanMemo record;
  record.set_format_version(kMemoFormat);
  for (const auto& [path, stamp] : memo.depends_on->files) {
    ToRecord(path, stamp, record.add_files());
  }
  for (const auto& [path, stamp] : memo.depends_on->dirs) {
    ToRecord(path, stamp, record.add_dirs());
  }
  for (const std::string& path : memo.depends_on->absent) {
    record.add_absent(path);
  }
  for (const std::string& path : memo.depends_on->absent_files) {
    record.add_absent_files(path);
  }
  for (const std::string& spelled : memo.depends_on->opened) {
    record.add_opened(spelled);
  }
  record.set_moves_with_place(memo.depends_on->moves_with_place);
  for (const ScannedFile& f : memo.result->files) {
    record.add_result_paths(f.path);
    record.add_result_sha256(std::string(f.digest.AsBytes()));
  }
  record.set_set_sha256(std::string(memo.result->set.AsBytes()));
  KeepFile(memo_dir_, key.Hex(), record);
}

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

std::shared_ptr<const IncludeScanner::MovableMemo> IncludeScanner::LoadMovable(
    const Digest& key) const {
  const int fd = ::open((memo_dir_ + "/" + MovableFileName(key)).c_str(),
                        O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  v1::MovableScanMemo record;
  const bool parsed = record.ParseFromFileDescriptor(fd);
  ::close(fd);
  if (!parsed || record.format_version() != kMovableFormat ||
      record.files_size() != record.sha256_size()) {
    return nullptr;
  }
  auto memo = std::make_shared<MovableMemo>();
  for (int i = 0; i < record.files_size(); ++i) {
    absl::StatusOr<Digest> digest = Digest::FromBytes(record.sha256(i));
    if (!digest.ok()) return nullptr;
    auto [anchored, stamp] = FromRecord(record.files(i));
    memo->files.push_back({std::move(anchored), *digest, stamp});
  }
  memo->opened.assign(record.opened().begin(), record.opened().end());
  memo->absent.assign(record.absent().begin(), record.absent().end());
  return memo;
}

void IncludeScanner::SaveMovable(const Digest& key,
                                 const MovableMemo& memo) const {
  v1::MovableScanMemo record;
  record.set_format_version(kMovableFormat);
  for (const MovableMemo::File& file : memo.files) {
    ToRecord(file.anchored, file.stamp, record.add_files());
    record.add_sha256(std::string(file.digest.AsBytes()));
  }
  for (const std::string& s : memo.opened) record.add_opened(s);
  for (const std::string& s : memo.absent) record.add_absent(s);
  KeepFile(memo_dir_, MovableFileName(key), record);
}

}  // namespace jitcache::internal
