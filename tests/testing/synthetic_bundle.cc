#include "tests/testing/synthetic_bundle.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client/bundle/bundle_file.h"
#include "common/digest.h"
#include "jitcache/v1/store.pb.h"

namespace jitcache::testing {

absl::Status WriteSyntheticBundle(const std::string& path,
                                  const std::string& fingerprint_hex,
                                  int entries, size_t object_bytes) {
  const std::string fingerprint = absl::HexStringToBytes(fingerprint_hex);
  v1::BundleHeader header;
  header.set_format_version(kBundleFormatVersion);
  header.set_toolchain_fingerprint(fingerprint_hex);
  header.set_entries(entries);
  absl::StatusOr<BundleWriter> writer = BundleWriter::Create(path, header);
  if (!writer.ok()) return writer.status();
  for (int i = 0; i < entries; ++i) {
    std::string bytes;
    bytes.reserve(object_bytes);
    for (size_t j = 0; bytes.size() < object_bytes; ++j) {
      bytes += std::string(Digest::Of(absl::StrCat(i, ":", j)).AsBytes());
    }
    const Digest digest = Digest::Of(bytes);
    v1::ActionRecord record;
    record.set_format_version(1);
    record.set_outcome(v1::OUTCOME_OK);
    record.set_target(v1::TARGET_CUBIN);
    record.set_object_digest(std::string(digest.AsBytes()));
    record.set_object_size(bytes.size());
    record.set_toolchain_fingerprint(fingerprint);
    record.set_arch("sm_90");
    v1::BundleEntry entry;
    entry.set_key(Digest::Of(absl::StrCat("entry ", i)).Hex());
    entry.set_record(record.SerializeAsString());
    v1::BundleObject* object = entry.add_objects();
    object->set_digest(digest.Hex());
    object->set_kind(v1::OBJECT_KIND_CUBIN);
    object->set_data(std::move(bytes));
    if (absl::Status s = writer->Add(entry); !s.ok()) return s;
  }
  return writer->Finish();
}

}  // namespace jitcache::testing
