#include "server/store/rocksdb_kv.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "server/store/rocksdb_logger.h"
#include "server/store/store_quarantine.h"
#include "server/store/store_release.h"

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
  if (s.IsNoSpace()) return absl::ResourceExhaustedError(message);
  if (s.IsNotFound()) return absl::NotFoundError(message);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

// Bytes the store directory takes as du counts them: allocated blocks of
// every file in it, so that preallocated logs, files RocksDB has not
// deleted yet and its own bookkeeping all count against the cap. The
// directory is flat and holds a few hundred files at most.
uint64_t DiskUsage(const std::string& dir) {
  uint64_t bytes = 0;
  struct stat self;
  if (stat(dir.c_str(), &self) == 0) {
    bytes += static_cast<uint64_t>(self.st_blocks) * 512;
  }
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    struct stat st;
    if (lstat(it->path().c_str(), &st) == 0) {
      bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }
  return bytes;
}

// An open database and its family handles: default, objects, actions,
// uploads. Closed when the last user lets go of it.
struct OpenedDb {
  OpenedDb() = default;
  OpenedDb(const OpenedDb&) = delete;
  OpenedDb& operator=(const OpenedDb&) = delete;
  ~OpenedDb() {
    if (db == nullptr) return;
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    db->Close();
  }

  rocksdb::ColumnFamilyHandle* Handle(Column c) const {
    switch (c) {
      case Column::kObjects:
        return handles[1];
      case Column::kActions:
        return handles[2];
      case Column::kUploads:
        break;
    }
    return handles[3];
  }

  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  bool read_only = false;
};

struct OpenSpec {
  std::string path;
  rocksdb::DBOptions options;
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  // Free space below which a failed store is not retried: room for a
  // memtable flush, so that a retry does not fail again at once.
  uint64_t resume_free_bytes = 0;
};

absl::StatusOr<std::shared_ptr<OpenedDb>> OpenDb(const OpenSpec& spec,
                                                 bool read_only) {
  auto opened = std::make_shared<OpenedDb>();
  opened->read_only = read_only;
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s =
      read_only
          ? rocksdb::DB::OpenForReadOnly(spec.options, spec.path, spec.families,
                                         &opened->handles, &raw)
          : rocksdb::DB::Open(spec.options, spec.path, spec.families,
                              &opened->handles, &raw);
  if (!s.ok()) {
    if (s.IsIOError() && absl::StrContains(s.ToString(), "lock")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "store ", spec.path,
          " is locked by another process (is another jitcached using it?): ",
          s.ToString()));
    }
    // A file the store lists is gone (a table deleted by hand): the store
    // is damaged, as when a file is cut short.
    if (s.IsPathNotFound()) {
      return absl::DataLossError(
          absl::StrCat("cannot open store ", spec.path, ": ", s.ToString()));
    }
    return FromRocks(s, absl::StrCat("cannot open store ", spec.path));
  }
  opened->db.reset(raw);
  return opened;
}

// The size of the file system that holds `path` (an existing directory);
// 0 when it cannot be told.
uint64_t FileSystemBytes(const std::string& path) {
  struct statvfs fs;
  if (statvfs(path.c_str(), &fs) != 0) return 0;
  return static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
}

uint64_t FreeBytes(const std::string& path) {
  struct statvfs fs;
  if (statvfs(path.c_str(), &fs) != 0) return 0;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

// A full disk is a state the store goes through, not an end: a store
// opened read-only for want of space at start is reopened for writing, and
// one whose writes failed is resumed, once there is room again
// (ResumeWrites). Each call works on the database current when it began
// (an iteration may call back into the store, so no lock is held across
// it); the read-only one closes when its last call returns.
class RocksDbKv final : public KvBackend {
 public:
  RocksDbKv(OpenSpec spec, std::shared_ptr<OpenedDb> db)
      : spec_(std::move(spec)), db_(std::move(db)) {}

  ~RocksDbKv() override {
    const std::shared_ptr<OpenedDb> db = Current();
    if (!db->read_only) {
      // Flush what the memtables hold, so that the next open reads SST
      // files instead of replaying the whole WAL (1.2 s for 100,000
      // entries).
      rocksdb::FlushOptions flush;
      flush.wait = true;
      if (rocksdb::Status s = db->db->Flush(flush, db->handles); !s.ok()) {
        JITCACHE_LOG(Warning) << "store flush on close: " << s.ToString();
      }
    }
  }

  absl::StatusOr<std::optional<std::string>> Get(
      Column column, absl::string_view key) override {
    const std::shared_ptr<OpenedDb> db = Current();
    std::string value;
    rocksdb::Status s =
        db->db->Get(rocksdb::ReadOptions(), db->Handle(column),
                    rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) return FromRocks(s, "store read");
    return value;
  }

  absl::Status Write(std::span<const KvWrite> writes) override {
    const std::shared_ptr<OpenedDb> db = Current();
    if (db->read_only) return ReadOnlyError();
    rocksdb::WriteBatch batch;
    for (const KvWrite& w : writes) {
      const rocksdb::Slice key(w.key.data(), w.key.size());
      rocksdb::Status s =
          w.erase ? batch.Delete(db->Handle(w.column), key)
                  : batch.Put(db->Handle(w.column), key,
                              rocksdb::Slice(w.value.data(), w.value.size()));
      if (!s.ok()) return FromRocks(s, "store batch");
    }
    // The WAL makes each batch survive a crash of the daemon; the batch
    // makes objects and their record appear together or not at all.
    return Checked(db->db->Write(rocksdb::WriteOptions(), &batch),
                   "store write");
  }

  absl::Status ForEach(
      Column column,
      const std::function<bool(absl::string_view, absl::string_view)>& visit,
      absl::string_view start) override {
    const std::shared_ptr<OpenedDb> db = Current();
    std::unique_ptr<rocksdb::Iterator> it(
        db->db->NewIterator(rocksdb::ReadOptions(), db->Handle(column)));
    for (it->Seek(rocksdb::Slice(start.data(), start.size())); it->Valid();
         it->Next()) {
      const rocksdb::Slice k = it->key(), v = it->value();
      if (!visit({k.data(), k.size()}, {v.data(), v.size()})) break;
    }
    return FromRocks(it->status(), "store scan");
  }

  absl::Status EraseAll(Column column) override {
    const std::shared_ptr<OpenedDb> db = Current();
    if (db->read_only) return ReadOnlyError();
    rocksdb::WriteBatch batch;
    rocksdb::Status s = batch.DeleteRange(db->Handle(column), rocksdb::Slice(),
                                          rocksdb::Slice(EndOfKeys()));
    if (!s.ok()) return FromRocks(s, "store range delete");
    return Checked(db->db->Write(rocksdb::WriteOptions(), &batch),
                   "store range delete");
  }

  absl::Status Reclaim(double blob_age_cutoff) override {
    const std::shared_ptr<OpenedDb> db = Current();
    if (db->read_only) return ReadOnlyError();
    rocksdb::FlushOptions flush;
    flush.wait = true;
    if (rocksdb::Status s = db->db->Flush(flush, db->handles); !s.ok()) {
      return Checked(s, "store flush");
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
              db->db->CompactRange(compact, db->Handle(c), nullptr, nullptr);
          !s.ok()) {
        return Checked(s, "store compaction");
      }
    }
    return absl::OkStatus();
  }

  uint64_t Bytes() override { return DiskUsage(spec_.path); }

  absl::Status ResumeWrites() override {
    const std::shared_ptr<OpenedDb> db = Current();
    if (!db->read_only && !failed_.load(std::memory_order_relaxed)) {
      return absl::OkStatus();
    }
    const uint64_t free = FreeBytes(spec_.path);
    if (free < spec_.resume_free_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "store ", spec_.path, " not writable yet: ", free,
          " bytes free of the ", spec_.resume_free_bytes, " it needs"));
    }
    // Space is checked every call; a cause that outlasts the retries with
    // space free (a quota, a file size limit) is retried less and less
    // often, up to every 30 s.
    const absl::Time now = absl::Now();
    if (now < next_resume_) return absl::UnavailableError("retried later");
    resume_backoff_ = std::min(resume_backoff_ * 2, absl::Seconds(30));
    next_resume_ = now + resume_backoff_;
    if (db->read_only) return ReopenForWriting();
    // RocksDB's own recovery from a full disk may be under way (then this
    // is Busy); this one also covers errors it does not retry (a quota,
    // a file size limit).
    const rocksdb::Status s = db->db->Resume();
    if (!s.ok()) return FromRocks(s, "store resume");
    Resumed();
    return absl::OkStatus();
  }

 private:
  // Every read (the hit path) takes this: shared, so that readers do not
  // queue behind one another; only the one swap to writable is exclusive.
  std::shared_ptr<OpenedDb> Current() {
    absl::ReaderMutexLock lock(&mu_);
    return db_;
  }

  absl::Status ReadOnlyError() const {
    return absl::ResourceExhaustedError(absl::StrCat(
        "store ", spec_.path,
        " is read-only: its file system was full when the daemon started; "
        "writes resume once there is room"));
  }

  void Resumed() {
    failed_.store(false, std::memory_order_relaxed);
    resume_backoff_ = absl::Milliseconds(500);
    next_resume_ = absl::InfinitePast();
  }

  absl::Status Checked(const rocksdb::Status& s, absl::string_view what) {
    if (!s.ok()) failed_.store(true, std::memory_order_relaxed);
    return FromRocks(s, what);
  }

  absl::Status ReopenForWriting() {
    absl::StatusOr<std::shared_ptr<OpenedDb>> writable =
        OpenDb(spec_, /*read_only=*/false);
    if (!writable.ok()) return writable.status();
    {
      absl::MutexLock lock(&mu_);
      db_ = *std::move(writable);
    }
    Resumed();
    JITCACHE_LOG(Warning) << "store " << spec_.path
                          << " opened for writing: there is room again";
    return absl::OkStatus();
  }

  const OpenSpec spec_;
  absl::Mutex mu_;
  std::shared_ptr<OpenedDb> db_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> failed_{false};  // a write failed; not resumed since
  // ResumeWrites is called from one thread (the janitor's).
  absl::Duration resume_backoff_ = absl::Milliseconds(500);
  absl::Time next_resume_ = absl::InfinitePast();
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

namespace {

// The store's directory: made if missing (private), and refused when others
// may write it; a warning when others may read it.
absl::Status PrepareStoreDirectory(const std::string& path) {
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
  // RocksDB's info logs of earlier versions: nothing writes them now.
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename();
    if (name == "LOG" || name.starts_with("LOG.old.")) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
  return absl::OkStatus();
}

// How the store is opened: the database's options and its four column
// families, sized in step with the cap (`max_size`, 0: none): a flush, a
// blob file or the WALs are each a small step next to it, so that eviction
// between the watermarks holds.
OpenSpec StoreSpec(const std::string& path, const RocksDbOptions& options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  db_options.info_log = NewDaemonLogForRocksDb();
  // Without a cap, the file system's size is the store's bound: on a small
  // one the memtables, logs and blob files are sized to it, so that a flush
  // fits (and writes resume) once a little room returns.
  const uint64_t whole = FileSystemBytes(path);
  const uint64_t cap =
      options.max_size != 0
          ? options.max_size
          : std::min(uint64_t{1} << 40, whole != 0 ? whole : uint64_t{1} << 40);
  // A WAL lives until every family with data in it has flushed: cap it, so
  // that records waiting in a memtable do not pin the objects logged since.
  db_options.max_total_wal_size = Clamp(cap / 32, 256 << 10, 256 << 20);
  // RocksDB reserves 4 MiB for its manifest up front, which du counts.
  db_options.manifest_preallocation_size = Clamp(cap / 256, 64 << 10, 4 << 20);
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
  // Nothing is written to the default family. Its memtable size still
  // counts: after a write fails for want of space, RocksDB resumes by
  // itself only once the largest memtable of any family fits (see the
  // README on a full disk).
  rocksdb::ColumnFamilyOptions unused;
  unused.write_buffer_size = 64 << 10;

  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, unused},
      {kObjectsFamily, objects},
      {kActionsFamily, actions},
      {kUploadsFamily, uploads}};
  OpenSpec spec{path, db_options, std::move(families)};
  spec.resume_free_bytes = objects.write_buffer_size + (1 << 20);
  return spec;
}

std::atomic<uint64_t> recovered_stores{0};
std::atomic<uint64_t> quarantined_stores{0};

// A damaged store: repaired by RocksDB's RepairDB where it can be (what
// survives is checked entry by entry as it is read: VerifyingStore), else
// moved aside and replaced by an empty one. Either way the daemon serves,
// says so at error level, and counts it.
absl::StatusOr<std::shared_ptr<OpenedDb>> Recover(const OpenSpec& spec,
                                                  const absl::Status& damage) {
  JITCACHE_LOG(Error) << "store " << spec.path << " is damaged (" << damage
                      << "); repairing it";
  const rocksdb::Status repaired = rocksdb::RepairDB(
      spec.path, spec.options, spec.families, rocksdb::ColumnFamilyOptions());
  absl::StatusOr<std::shared_ptr<OpenedDb>> opened =
      repaired.ok() ? OpenDb(spec, /*read_only=*/false)
                    : FromRocks(repaired, "repair");
  if (opened.ok()) {
    ++recovered_stores;
    JITCACHE_LOG(Error) << "store " << spec.path
                        << " repaired; entries that did not survive are "
                           "misses, compiled again when asked";
    return opened;
  }
  const absl::Status unrepaired = opened.status();
  absl::StatusOr<std::string> aside = QuarantineStore(spec.path);
  if (!aside.ok()) return aside.status();
  if (absl::Status s = PrepareStoreDirectory(spec.path); !s.ok()) return s;
  opened = OpenDb(spec, /*read_only=*/false);
  if (!opened.ok()) return opened.status();
  ++quarantined_stores;
  JITCACHE_LOG(Error) << "store " << spec.path << " could not be repaired ("
                      << unrepaired << "); moved aside to " << *aside
                      << " and started empty (at most "
                      << kMostQuarantinedStores << " damaged stores are kept)";
  return opened;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KvBackend>> OpenRocksDbKv(
    const std::string& path, const RocksDbOptions& options) {
  if (absl::Status s = PrepareStoreDirectory(path); !s.ok()) return s;
  OpenSpec spec = StoreSpec(path, options);
  absl::StatusOr<std::shared_ptr<OpenedDb>> opened =
      OpenDb(spec, /*read_only=*/false);
  if (!opened.ok() && absl::IsResourceExhausted(opened.status())) {
    // Opening for writing writes a new manifest and log. With no room for
    // them, serve what the store holds until there is.
    JITCACHE_LOG(Error) << opened.status()
                        << "; serving the store read-only until its file "
                           "system has room again";
    opened = OpenDb(spec, /*read_only=*/true);
  }
  // Damage (a truncated or zeroed table, a damaged MANIFEST or CURRENT, a
  // missing table), as opposed to a store that is locked, of a newer
  // format, full or not ours to read: those are refused as before.
  if (!opened.ok() && absl::IsDataLoss(opened.status())) {
    if (std::optional<std::string> newer = NewerRocksDbRelease(path)) {
      return absl::FailedPreconditionError(absl::StrCat(
          opened.status().message(), "\nThe store ", path,
          " was written by RocksDB ", *newer, ", newer than this jitcached's (",
          ROCKSDB_MAJOR, ".", ROCKSDB_MINOR, ".", ROCKSDB_PATCH,
          "): it is left as it is. Run the jitcached that wrote it, or give "
          "this one another --store."));
    }
    if (!options.recover_damage) {
      return absl::DataLossError(absl::StrCat(
          opened.status().message(),
          "\nThe store is damaged: a start would repair it (RocksDB's "
          "RepairDB; entries that do not survive are compiled again when "
          "asked) or, if that fails, move it aside to ",
          path, ".damaged-TIME-N and start empty."));
    }
    opened = Recover(spec, opened.status());
  }
  if (!opened.ok()) return opened.status();
  return std::make_unique<RocksDbKv>(std::move(spec), *std::move(opened));
}

StoreRecoveries StoreRecoveryCounts() {
  return {recovered_stores.load(), quarantined_stores.load()};
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

}  // namespace jitcache
