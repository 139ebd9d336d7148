#include "server/store/rocksdb_kv.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/log.h"

namespace jitcache {
namespace {

constexpr char kObjectsFamily[] = "objects";
constexpr char kActionsFamily[] = "actions";
constexpr char kUploadsFamily[] = "uploads";

// Past every key of the store (keys are 32-byte digests).
const std::string& EndOfKeys() {
  static const std::string* end = new std::string(64, '\xff');
  return *end;
}

uint64_t Clamp(uint64_t v, uint64_t lo, uint64_t hi) {
  return std::min(std::max(v, lo), hi);
}

rocksdb::CompressionType ToRocks(Compression c) {
  switch (c) {
    case Compression::kNone:
      return rocksdb::kNoCompression;
    case Compression::kLz4:
      return rocksdb::kLZ4Compression;
    case Compression::kZstd:
      break;
  }
  return rocksdb::kZSTD;
}

// The one place rocksdb::Status becomes absl::Status.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

class RocksDbKv final : public KvBackend {
 public:
  RocksDbKv(std::unique_ptr<rocksdb::DB> db,
            std::vector<rocksdb::ColumnFamilyHandle*> handles)
      : db_(std::move(db)), handles_(std::move(handles)) {}

  ~RocksDbKv() override {
    // Flush what the memtables hold, so that the next open reads SST files
    // instead of replaying the whole WAL (1.2 s for 100,000 entries).
    rocksdb::FlushOptions flush;
    flush.wait = true;
    if (rocksdb::Status s = db_->Flush(flush, handles_); !s.ok()) {
      JITCACHE_LOG(Warning) << "store flush on close: " << s.ToString();
    }
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    db_->Close();
  }

  absl::StatusOr<std::optional<std::string>> Get(
      Column column, absl::string_view key) override {
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), Handle(column),
                 rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) return FromRocks(s, "store read");
    return value;
  }

  absl::Status Write(std::span<const KvWrite> writes) override {
    rocksdb::WriteBatch batch;
    for (const KvWrite& w : writes) {
      const rocksdb::Slice key(w.key.data(), w.key.size());
      rocksdb::Status s =
          w.erase ? batch.Delete(Handle(w.column), key)
                  : batch.Put(Handle(w.column), key,
                              rocksdb::Slice(w.value.data(), w.value.size()));
      if (!s.ok()) return FromRocks(s, "store batch");
    }
    // The WAL makes each batch survive a crash of the daemon; the batch
    // makes objects and their record appear together or not at all.
    return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                     "store write");
  }

  absl::Status ForEach(
      Column column,
      const std::function<bool(absl::string_view, absl::string_view)>& visit,
      absl::string_view start) override {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), Handle(column)));
    for (it->Seek(rocksdb::Slice(start.data(), start.size())); it->Valid();
         it->Next()) {
      const rocksdb::Slice k = it->key(), v = it->value();
      if (!visit({k.data(), k.size()}, {v.data(), v.size()})) break;
    }
    return FromRocks(it->status(), "store scan");
  }

  absl::Status EraseAll(Column column) override {
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.DeleteRange(Handle(column), rocksdb::Slice(),
                                          rocksdb::Slice(EndOfKeys()));
    if (!s.ok()) return FromRocks(s, "store range delete");
    return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch),
                     "store range delete");
  }

  absl::Status Reclaim(double blob_age_cutoff) override {
    rocksdb::FlushOptions flush;
    flush.wait = true;
    if (rocksdb::Status s = db_->Flush(flush, handles_); !s.ok()) {
      return FromRocks(s, "store flush");
    }
    for (Column c : {Column::kObjects, Column::kActions, Column::kUploads}) {
      rocksdb::CompactRangeOptions compact;
      // Tombstones live in the bottommost files too: rewrite those.
      compact.bottommost_level_compaction =
          rocksdb::BottommostLevelCompaction::kForceOptimized;
      if (c == Column::kObjects) {
        compact.blob_garbage_collection_policy =
            rocksdb::BlobGarbageCollectionPolicy::kForce;
        compact.blob_garbage_collection_age_cutoff = blob_age_cutoff;
      }
      if (rocksdb::Status s =
              db_->CompactRange(compact, Handle(c), nullptr, nullptr);
          !s.ok()) {
        return FromRocks(s, "store compaction");
      }
    }
    return absl::OkStatus();
  }

  uint64_t Bytes() override {
    uint64_t bytes = 0;
    // Files as RocksDB reports them (including obsolete ones it has not
    // deleted yet), plus the write-ahead logs, which hold what the
    // memtables hold.
    for (auto* h : handles_) {
      uint64_t v = 0;
      if (db_->GetIntProperty(h, "rocksdb.total-sst-files-size", &v)) {
        bytes += v;
      }
      if (db_->GetIntProperty(h, "rocksdb.total-blob-file-size", &v)) {
        bytes += v;
      }
    }
    rocksdb::VectorLogPtr wals;
    if (db_->GetSortedWalFiles(wals).ok()) {
      for (const auto& wal : wals) bytes += wal->SizeFileBytes();
    }
    return bytes;
  }

 private:
  rocksdb::ColumnFamilyHandle* Handle(Column c) {
    switch (c) {
      case Column::kObjects:
        return handles_[1];
      case Column::kActions:
        return handles_[2];
      case Column::kUploads:
        break;
    }
    return handles_[3];
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*>
      handles_;  // default, objects, actions, uploads
};

}  // namespace

std::optional<Compression> ParseCompression(absl::string_view name) {
  if (name == "none") return Compression::kNone;
  if (name == "lz4") return Compression::kLz4;
  if (name == "zstd") return Compression::kZstd;
  return std::nullopt;
}

absl::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      break;
  }
  return "zstd";
}

absl::StatusOr<std::unique_ptr<KvBackend>> OpenRocksDbKv(
    const std::string& path, const RocksDbOptions& options) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create store directory ", path, ": ", ec.message()));
  }
  // The store holds every user's programs' objects and logs: only the
  // daemon's user may look in; and where others may write, anyone could
  // plant or replace what the daemon serves.
  if (!existed && chmod(path.c_str(), 0700) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make store directory ", path,
                     " private: ", std::strerror(errno)));
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("store directory ", path, ": ", std::strerror(errno)));
  }
  if ((st.st_mode & 022) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "store directory ", path, " is writable by others (mode ",
        absl::StrFormat("%04o", st.st_mode & 07777),
        "): anyone could plant what the daemon serves; chmod go-w ", path));
  }
  if ((st.st_mode & 007) != 0) {
    JITCACHE_LOG(Warning) << "store directory " << path
                          << " is readable by others: every user's objects "
                             "and logs are; chmod o-rwx "
                          << path;
  }
  if (access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("store directory ", path, " is not writable"));
  }

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  db_options.keep_log_file_num = 4;
  db_options.max_log_file_size = 1 << 20;  // RocksDB's own info LOG

  // Sizes in step with the cap: a flush, a blob file or the WALs are each a
  // small step next to it, so that eviction between the watermarks holds.
  const uint64_t cap =
      options.max_size == 0 ? (uint64_t{1} << 40) : options.max_size;
  // A WAL lives until every family with data in it has flushed: cap it, so
  // that records waiting in a memtable do not pin the objects logged since.
  db_options.max_total_wal_size = Clamp(cap / 32, 256 << 10, 256 << 20);
  const rocksdb::CompressionType compression = ToRocks(options.compression);

  rocksdb::ColumnFamilyOptions objects;
  // Objects are large and written once: keep them in blob files (in write
  // order, so that the least recently used tend to share the oldest files),
  // so that compaction does not rewrite them and eviction frees whole files.
  objects.enable_blob_files = true;
  objects.min_blob_size = 512;
  objects.blob_file_size = Clamp(cap / 64, 1 << 20, 256 << 20);
  objects.write_buffer_size = Clamp(cap / 64, 64 << 10, 64 << 20);
  objects.blob_compression_type = compression;
  objects.compression = compression;
  // Blob garbage is collected only when the janitor asks (Reclaim): a
  // background collection moves live blobs into new files before the old
  // ones go, a jump in size the cap would not see coming.
  objects.enable_blob_garbage_collection = false;
  rocksdb::ColumnFamilyOptions actions;
  actions.OptimizeForPointLookup(64);
  actions.write_buffer_size = Clamp(cap / 256, 64 << 10, 16 << 20);
  actions.compression = compression;
  rocksdb::ColumnFamilyOptions uploads;
  uploads.write_buffer_size = 64 << 10;

  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kObjectsFamily, objects},
      {kActionsFamily, actions},
      {kUploadsFamily, uploads}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s =
      rocksdb::DB::Open(db_options, path, families, &handles, &raw);
  if (!s.ok()) {
    if (s.IsIOError() && absl::StrContains(s.ToString(), "lock")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "store ", path,
          " is locked by another process (is another jitcached using it?): ",
          s.ToString()));
    }
    return FromRocks(s, absl::StrCat("cannot open store ", path));
  }
  return std::make_unique<RocksDbKv>(std::unique_ptr<rocksdb::DB>(raw),
                                     std::move(handles));
}

absl::Status CheckWriteAheadLog(const std::string& path) {
  rocksdb::DBOptions options;
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
  std::vector<std::string> names;
  rocksdb::Status s =
      rocksdb::DB::ListColumnFamilies(rocksdb::Options(), path, &names);
  if (!s.ok()) return FromRocks(s, absl::StrCat("store ", path));
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) {
    families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::OpenForReadOnly(options, path, families, &handles, &raw);
  if (!s.ok()) {
    return FromRocks(
        s, absl::StrCat("the write-ahead log of store ", path,
                        " is damaged: records logged after the damage are "
                        "lost when the store opens"));
  }
  for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
  delete raw;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<VerifyingStore>> OpenRocksDbStore(
    const std::string& path, const RocksDbOptions& options,
    StoreOptions store_options) {
  absl::StatusOr<std::unique_ptr<KvBackend>> kv = OpenRocksDbKv(path, options);
  if (!kv.ok()) return kv.status();
  return VerifyingStore::Open(*std::move(kv), std::move(store_options));
}

}  // namespace jitcache
