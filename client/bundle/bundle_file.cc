#include "client/bundle/bundle_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/digest.h"
#include "common/little_endian.h"

namespace jitcache {
namespace {

constexpr char kMagic[8] = {'J', 'C', 'B', 'U', 'N', 'D', 'L', 'E'};

absl::Status IoError(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat("cannot ", what, " ", path, ": ", strerror(errno)));
}

}  // namespace

absl::StatusOr<BundleWriter> BundleWriter::Create(
    const std::string& path, const v1::BundleHeader& header) {
  FilePtr file(fopen((path + ".tmp").c_str(), "wb"), &fclose);
  if (file == nullptr) return IoError("create", path + ".tmp");
  BundleWriter writer(path, std::move(file));
  std::string start(kMagic, sizeof(kMagic));
  le::Append<uint32_t>(&start, kBundleFormatVersion);
  if (fwrite(start.data(), 1, start.size(), writer.file_.get()) !=
      start.size()) {
    return IoError("write", path + ".tmp");
  }
  writer.bytes_ = start.size();
  if (absl::Status s = writer.WriteFrame('H', header.SerializeAsString());
      !s.ok()) {
    return s;
  }
  return writer;
}

absl::Status BundleWriter::WriteFrame(char type, const std::string& payload) {
  if (payload.size() > kMaxBundleFrame) {
    return absl::InvalidArgumentError(
        absl::StrCat("an entry of ", payload.size(),
                     " bytes is over a bundle's frame limit"));
  }
  std::string head(1, type);
  le::Append<uint32_t>(&head, static_cast<uint32_t>(payload.size()));
  const Digest sum = Digest::Of(payload);
  if (fwrite(head.data(), 1, head.size(), file_.get()) != head.size() ||
      fwrite(payload.data(), 1, payload.size(), file_.get()) !=
          payload.size() ||
      fwrite(sum.bytes.data(), 1, sum.bytes.size(), file_.get()) !=
          sum.bytes.size()) {
    return IoError("write", path_ + ".tmp");
  }
  bytes_ += head.size() + payload.size() + sum.bytes.size();
  return absl::OkStatus();
}

absl::Status BundleWriter::Add(const v1::BundleEntry& entry) {
  if (absl::Status s = WriteFrame('E', entry.SerializeAsString()); !s.ok()) {
    return s;
  }
  ++entries_;
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  std::string count;
  le::Append<uint64_t>(&count, entries_);
  if (absl::Status s = WriteFrame('Z', count); !s.ok()) return s;
  if (fflush(file_.get()) != 0 || fsync(fileno(file_.get())) != 0) {
    return IoError("write", path_ + ".tmp");
  }
  file_.reset();
  if (rename((path_ + ".tmp").c_str(), path_.c_str()) != 0) {
    return IoError("rename to", path_);
  }
  finished_ = true;
  return absl::OkStatus();
}

BundleWriter::~BundleWriter() {
  // Unfinished: leave no partial file behind.
  if (!finished_ && !path_.empty()) {
    file_.reset();
    unlink((path_ + ".tmp").c_str());
  }
}

absl::StatusOr<BundleReader> BundleReader::Open(const std::string& path) {
  FilePtr file(fopen(path.c_str(), "rb"), &fclose);
  if (file == nullptr) return IoError("open", path);
  if (fseeko(file.get(), 0, SEEK_END) != 0) return IoError("read", path);
  const off_t size = ftello(file.get());
  rewind(file.get());
  BundleReader reader(path, std::move(file), static_cast<uint64_t>(size));
  char start[12];
  if (reader.size_ < sizeof(start) ||
      fread(start, 1, sizeof(start), reader.file_.get()) != sizeof(start) ||
      std::memcmp(start, kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a jitcache bundle (no JCBUNDLE header)"));
  }
  reader.offset_ = sizeof(start);
  const uint64_t version = le::Get<uint32_t>(start + 8);
  if (version != kBundleFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is a bundle of format ", version,
                     "; this jitcache reads format ", kBundleFormatVersion));
  }
  absl::StatusOr<std::pair<char, std::string>> frame = reader.ReadFrame();
  if (!frame.ok()) return frame.status();
  if (frame->first != 'H' || !reader.header_.ParseFromString(frame->second)) {
    return reader.Corrupt("its first frame is not a header");
  }
  return reader;
}

absl::Status BundleReader::Corrupt(absl::string_view why) const {
  return absl::DataLossError(absl::StrCat(
      "bundle ", path_, " is damaged at byte ", offset_, ": ", why));
}

absl::StatusOr<std::pair<char, std::string>> BundleReader::ReadFrame() {
  char head[5];
  if (size_ - offset_ < sizeof(head) ||
      fread(head, 1, sizeof(head), file_.get()) != sizeof(head)) {
    return Corrupt("it ends without its end frame (truncated)");
  }
  const uint64_t length = le::Get<uint32_t>(head + 1);
  const uint64_t left = size_ - offset_ - sizeof(head);
  if (length > kMaxBundleFrame || length + 32 > left) {
    return Corrupt(absl::StrCat("a frame claims ", length, " bytes; ", left,
                                " remain (truncated or corrupt)"));
  }
  std::string payload(length, '\0');
  char sum[32];
  if (fread(payload.data(), 1, length, file_.get()) != length ||
      fread(sum, 1, sizeof(sum), file_.get()) != sizeof(sum)) {
    return Corrupt("read failed");
  }
  if (std::memcmp(Digest::Of(payload).bytes.data(), sum, sizeof(sum)) != 0) {
    return Corrupt("a frame's checksum does not match");
  }
  offset_ += sizeof(head) + length + sizeof(sum);
  return std::make_pair(head[0], std::move(payload));
}

absl::StatusOr<std::optional<v1::BundleEntry>> BundleReader::Next() {
  if (ended_) return std::nullopt;
  absl::StatusOr<std::pair<char, std::string>> frame = ReadFrame();
  if (!frame.ok()) return frame.status();
  if (frame->first == 'Z') {
    if (frame->second.size() != 8 ||
        le::Get<uint64_t>(frame->second.data()) != entries_) {
      return Corrupt("its end frame's count does not match its entries");
    }
    if (offset_ != size_) return Corrupt("bytes follow its end frame");
    ended_ = true;
    return std::nullopt;
  }
  v1::BundleEntry entry;
  if (frame->first != 'E' || !entry.ParseFromString(frame->second)) {
    return Corrupt("a frame is not an entry");
  }
  ++entries_;
  return entry;
}

absl::Status CheckBundleEntry(const v1::BundleEntry& entry) {
  for (const v1::BundleObject& object : entry.objects()) {
    absl::StatusOr<Digest> digest = Digest::FromHex(object.digest());
    if (!digest.ok() || Digest::Of(object.data()) != *digest) {
      return absl::DataLossError(absl::StrCat(
          "entry ", entry.key().substr(0, 64), ": object ",
          object.digest().substr(0, 64), " does not match its digest"));
    }
  }
  return absl::OkStatus();
}

}  // namespace jitcache
