// JitCacheService's inspection calls: list, show and export the store's
// entries. They read records (small) in key order and objects only for
// export.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/absl_view.h"
#include "common/cache_key.h"
#include "jitcache/v1/wire_kinds.h"
#include "server/engine/place_proof.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/jitcache_service.h"
#include "server/store/bundle_entries.h"

namespace jitcache {
namespace {

void FillEntryInfo(const Digest& key, const v1::ActionRecord& record,
                   bool details, v1::EntryInfo* info) {
  info->set_key(key.Hex());
  info->set_outcome(record.outcome());
  info->set_target(record.target());
  info->set_arch(record.arch());
  *info->mutable_options() = record.options();
  info->set_program_name(record.program_name());
  if (!record.object_digest().empty()) {
    info->set_object_digest(absl::BytesToHexString(record.object_digest()));
  }
  info->set_object_size(record.object_size());
  info->set_record_size(record.ByteSizeLong());
  info->set_source_bytes(record.source_bytes());
  info->set_created_unix_ms(record.created_unix_ms());
  info->set_last_used_unix_ms(record.last_used_unix_ms());
  info->set_compile_time_us(record.compile_time_us());
  info->set_is_link(record.input_digests_size() > 0);
  for (const std::string& input : record.input_digests()) {
    info->add_input_digests(absl::BytesToHexString(input));
  }
  info->set_log_size(record.log().size());
  if (details) {
    *info->mutable_lowered_names() = record.lowered_names();
    // A template shows the log as its first program had it.
    info->set_log(record.log_names_program()
                      ? LogFor(record.log(), record.program_name())
                      : record.log());
  }
}

// A key prefix in lower case: 1 to 64 hex digits; INVALID_ARGUMENT
// otherwise.
absl::StatusOr<std::string> KeyPrefix(absl::string_view text) {
  const bool hex = std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isxdigit(static_cast<unsigned char>(c));
  });
  if (text.empty() || text.size() > 64 || !hex) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text.substr(0, 80), "' is not a key prefix (1 to 64 hex digits)"));
  }
  return absl::AsciiStrToLower(text);
}

// The first raw key a hex prefix can match: its even part as bytes, the odd
// digit (if any) as the high nibble.
std::string RawStart(absl::string_view hex) {
  std::string padded(hex);
  if (padded.size() % 2 == 1) padded.push_back('0');
  return absl::HexStringToBytes(padded);
}

constexpr uint64_t kDefaultPageBytes = 8 << 20;

}  // namespace

grpc::ServerUnaryReactor* JitCacheService::ListEntries(
    grpc::CallbackServerContext* context, const v1::ListEntriesRequest* request,
    v1::ListEntriesResponse* response) {
  std::vector<v1::EntryInfo> entries;
  absl::Status scan = options_.store->ForEachRecord(
      "", [&](const Digest& key, const v1::ActionRecord& record) {
        if (!request->arch().empty() && record.arch() != request->arch()) {
          return true;
        }
        if (request->target() != v1::TARGET_UNSPECIFIED &&
            record.target() != request->target()) {
          return true;
        }
        FillEntryInfo(key, record, /*details=*/false, &entries.emplace_back());
        return true;
      });
  if (!scan.ok()) return Finish(context, scan);
  // The store's last-used times lag hits by up to a minute; the index
  // knows better, but a listing is for people: close enough.
  if (request->sort() == v1::ListEntriesRequest::SORT_SIZE) {
    std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) {
      return a.object_size() + a.record_size() >
             b.object_size() + b.record_size();
    });
  } else {
    std::stable_sort(entries.begin(), entries.end(), [](auto& a, auto& b) {
      return a.last_used_unix_ms() > b.last_used_unix_ms();
    });
  }
  response->set_matching(entries.size());
  const size_t n = request->limit() == 0
                       ? entries.size()
                       : std::min<size_t>(entries.size(), request->limit());
  for (size_t i = 0; i < n; ++i) {
    *response->add_entries() = std::move(entries[i]);
  }
  return Finish(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* JitCacheService::ShowEntry(
    grpc::CallbackServerContext* context, const v1::ShowEntryRequest* request,
    v1::ShowEntryResponse* response) {
  absl::StatusOr<std::string> checked = KeyPrefix(request->key_prefix());
  if (!checked.ok()) return Finish(context, checked.status());
  const std::string& prefix = *checked;
  std::vector<std::pair<Digest, v1::ActionRecord>> found;
  absl::Status scan = options_.store->ForEachRecord(
      RawStart(prefix), [&](const Digest& key, const v1::ActionRecord& record) {
        if (!absl::StartsWith(key.Hex(), prefix)) return false;
        found.emplace_back(key, record);
        return found.size() < 2;
      });
  if (!scan.ok()) return Finish(context, scan);
  if (found.empty()) {
    return Finish(context, absl::NotFoundError(absl::StrCat(
                               "no entry's key starts with ", prefix)));
  }
  if (found.size() > 1) {
    return Finish(
        context,
        absl::InvalidArgumentError(absl::StrCat(
            "key prefix ", prefix, " is ambiguous: ", found[0].first.Hex(),
            " and ", found[1].first.Hex(), " (at least); give more digits")));
  }
  FillEntryInfo(found[0].first, found[0].second, /*details=*/true,
                response->mutable_entry());
  return Finish(context, absl::OkStatus());
}

absl::StatusOr<std::optional<v1::BundleEntry>> JitCacheService::EntryFor(
    const Digest& key, const v1::ActionRecord& record) {
  return BundleEntryFor(*options_.store, key, record);
}

grpc::ServerUnaryReactor* JitCacheService::ExportEntries(
    grpc::CallbackServerContext* context, const v1::ExportRequest* request,
    v1::ExportResponse* response) {
  std::vector<std::string> prefixes;
  for (const std::string& p : request->key_prefixes()) {
    absl::StatusOr<std::string> prefix = KeyPrefix(p);
    if (!prefix.ok()) return Finish(context, prefix.status());
    prefixes.push_back(*std::move(prefix));
  }
  std::string start;
  if (!request->after_key().empty()) {
    absl::StatusOr<Digest> after = Digest::FromHex(request->after_key());
    if (!after.ok()) return Finish(context, after.status());
    // The smallest key greater than `after`.
    start = absl::StrCat(AbslView(after->AsBytes()), std::string(1, '\0'));
  }
  auto matches = [&](const Digest& key, const v1::ActionRecord& record) {
    if (request->archs_size() > 0 &&
        std::find(request->archs().begin(), request->archs().end(),
                  record.arch()) == request->archs().end()) {
      return false;
    }
    if (prefixes.empty()) return true;
    const std::string hex = key.Hex();
    for (const std::string& p : prefixes) {
      if (absl::StartsWith(hex, p)) return true;
    }
    return false;
  };
  if (start.empty()) {
    uint64_t matching = 0;
    absl::Status scan = options_.store->ForEachRecord(
        "", [&](const Digest& key, const v1::ActionRecord& record) {
          matching += matches(key, record);
          return true;
        });
    if (!scan.ok()) return Finish(context, scan);
    response->set_matching(matching);
  }
  const ToolchainInfo& toolchain = options_.compiler->toolchain();
  response->set_toolchain_fingerprint(
      absl::BytesToHexString(toolchain.fingerprint));
  response->set_toolchain(toolchain.description);
  response->set_key_schema_version(kKeySchemaVersion);

  const uint64_t page_bytes =
      request->max_bytes() == 0 ? kDefaultPageBytes : request->max_bytes();
  uint64_t bytes = 0;
  bool more = false;
  std::string last_key;
  absl::Status failure;
  absl::Status scan = options_.store->ForEachRecord(
      start, [&](const Digest& key, const v1::ActionRecord& record) {
        if (!matches(key, record)) return true;
        if (bytes >= page_bytes) {
          more = true;
          return false;
        }
        absl::StatusOr<std::optional<v1::BundleEntry>> made =
            EntryFor(key, record);
        if (!made.ok()) {
          failure = made.status();
          return false;
        }
        // An entry whose object is gone, or whose record is damaged, is not
        // shipped (a lookup would drop it too).
        if (!made->has_value()) return true;
        v1::BundleEntry& entry = **made;
        bytes += entry.ByteSizeLong();
        last_key = key.Hex();
        *response->add_entries() = std::move(entry);
        return true;
      });
  if (!scan.ok()) return Finish(context, scan);
  if (!failure.ok()) return Finish(context, failure);
  if (more) response->set_next_after_key(last_key);
  return Finish(context, absl::OkStatus());
}

}  // namespace jitcache
