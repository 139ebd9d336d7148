#ifndef JITCACHE_CLIENT_BUNDLE_BUNDLE_FILE_H_
#define JITCACHE_CLIENT_BUNDLE_BUNDLE_FILE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// A bundle (.jcb): a store's entries in one self-describing file.
//
//   "JCBUNDLE" | u32 format version (1)
//   frames:  u8 type | u32 length | payload | SHA-256 of payload (32 bytes)
//     'H' BundleHeader (first), 'E' BundleEntry (any number),
//     'Z' u64 count of entries (last: a file without it is truncated)
// Integers are little-endian. Each object inside an entry carries its own
// SHA-256 (its address). Readers trust nothing: a length past the end of the
// file, a frame over kMaxBundleFrame, a bad checksum or a missing end is a
// DATA_LOSS error naming the frame, before anything is allocated for it.
inline constexpr uint32_t kBundleFormatVersion = 1;
inline constexpr uint32_t kMaxBundleFrame = 1u << 30;

using FilePtr = std::unique_ptr<FILE, int (*)(FILE*)>;

// Writes to PATH.tmp and renames it to PATH on Finish: a bundle that exists
// is whole. Not thread-safe.
class BundleWriter {
 public:
  static absl::StatusOr<BundleWriter> Create(const std::string& path,
                                             const v1::BundleHeader& header);
  absl::Status Add(const v1::BundleEntry& entry);
  absl::Status Finish();
  ~BundleWriter();
  BundleWriter(BundleWriter&&) = default;

  uint64_t entries() const { return entries_; }
  uint64_t bytes() const { return bytes_; }

 private:
  BundleWriter(std::string path, FilePtr file)
      : path_(std::move(path)), file_(std::move(file)) {}
  absl::Status WriteFrame(char type, const std::string& payload);

  std::string path_;
  FilePtr file_;
  uint64_t entries_ = 0;
  uint64_t bytes_ = 0;
  bool finished_ = false;
};

// Reads a bundle frame by frame. Not thread-safe.
class BundleReader {
 public:
  static absl::StatusOr<BundleReader> Open(const std::string& path);
  const v1::BundleHeader& header() const { return header_; }
  // The next entry, or nullopt after the end frame (whose count is checked).
  absl::StatusOr<std::optional<v1::BundleEntry>> Next();
  uint64_t file_size() const { return size_; }
  uint64_t offset() const { return offset_; }

 private:
  BundleReader(std::string path, FilePtr file, uint64_t size)
      : path_(std::move(path)), file_(std::move(file)), size_(size) {}
  // One frame: its type and payload, checked.
  absl::StatusOr<std::pair<char, std::string>> ReadFrame();
  absl::Status Corrupt(absl::string_view why) const;

  std::string path_;
  FilePtr file_;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  uint64_t entries_ = 0;
  bool ended_ = false;
  v1::BundleHeader header_;
};

// Checks one entry's objects against their digests; DATA_LOSS naming the
// first that does not match.
absl::Status CheckBundleEntry(const v1::BundleEntry& entry);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_BUNDLE_BUNDLE_FILE_H_
