#include "jitcache/store_admin.h"

#include <grpcpp/client_context.h>

#include "absl/strings/str_cat.h"
#include "client/bundle/bundle_file.h"
#include "client/rpc/code_types.h"
#include "client/rpc/messages.h"
#include "client/rpc/rpc_channel.h"
#include "common/paths.h"
#include "jitcache/v1/jitcache.grpc.pb.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {
namespace {

// Bytes of entries per Import call and per Export page: well under the
// daemon's default request limit (64 MiB).
constexpr uint64_t kBatchBytes = 8 << 20;

absl::StatusOr<StoreEntry> FromWire(const v1::EntryInfo& e) {
  const std::optional<ObjectKind> target = FromWireTarget(e.target());
  if (!target.has_value()) {
    return absl::DataLossError(absl::StrCat("entry ", e.key(),
                                            " has a target this client does "
                                            "not know (",
                                            e.target(), ")"));
  }
  StoreEntry out;
  out.key = e.key();
  out.outcome = e.outcome() == v1::OUTCOME_OK              ? "OK"
                : e.outcome() == v1::OUTCOME_LINK_ERROR    ? "LINK_ERROR"
                : e.outcome() == v1::OUTCOME_COMPILE_ERROR ? "COMPILE_ERROR"
                                                           : "UNKNOWN";
  out.target = ToCodeType(*target);
  out.arch = e.arch();
  out.options.assign(e.options().begin(), e.options().end());
  out.program_name = e.program_name();
  out.is_link = e.is_link();
  out.object_digest = e.object_digest();
  out.object_size = e.object_size();
  out.record_size = e.record_size();
  out.source_bytes = e.source_bytes();
  out.log_size = e.log_size();
  out.created = absl::FromUnixMillis(e.created_unix_ms());
  out.last_used = absl::FromUnixMillis(e.last_used_unix_ms());
  out.compile_time_us = e.compile_time_us();
  out.input_digests.assign(e.input_digests().begin(), e.input_digests().end());
  for (const v1::LoweredName& n : e.lowered_names()) {
    out.lowered_names[n.name_expression()] = n.lowered_name();
  }
  out.log = e.log();
  return out;
}

EvictReport FromWire(const v1::EvictResponse& r) {
  return {r.records(),    r.uploads(),      r.objects(),
          r.live_bytes(), r.bytes_before(), r.bytes_after()};
}

}  // namespace

struct StoreAdmin::Impl {
  std::string socket_path;
  absl::Duration deadline;
  std::unique_ptr<v1::JitCache::Stub> stub;

  template <typename Request, typename Response>
  absl::Status Call(grpc::Status (v1::JitCache::Stub::*method)(
                        grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response) const {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    return FromGrpc((stub.get()->*method)(&context, request, response),
                    socket_path);
  }
};

StoreAdmin StoreAdmin::Connect(std::string socket_path,
                               absl::Duration deadline) {
  auto impl = std::make_unique<Impl>();
  impl->socket_path =
      socket_path.empty() ? DefaultClientSocketPath() : std::move(socket_path);
  impl->deadline = deadline;
  impl->stub = v1::JitCache::NewStub(MakeDaemonChannel(impl->socket_path));
  return StoreAdmin(std::move(impl));
}

StoreAdmin::StoreAdmin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreAdmin::StoreAdmin(StoreAdmin&&) noexcept = default;
StoreAdmin& StoreAdmin::operator=(StoreAdmin&&) noexcept = default;
StoreAdmin::~StoreAdmin() = default;

const std::string& StoreAdmin::socket_path() const {
  return impl_->socket_path;
}

absl::StatusOr<EvictReport> StoreAdmin::Evict(
    std::optional<uint64_t> to_size,
    std::optional<absl::Duration> older_than) const {
  v1::EvictRequest request;
  if (to_size.has_value()) request.set_to_size_bytes(*to_size);
  if (older_than.has_value()) {
    request.set_older_than_seconds(
        std::max<int64_t>(1, absl::ToInt64Seconds(*older_than)));
  }
  v1::EvictResponse response;
  if (absl::Status s =
          impl_->Call(&v1::JitCache::Stub::Evict, request, &response);
      !s.ok()) {
    return s;
  }
  return FromWire(response);
}

absl::StatusOr<EvictReport> StoreAdmin::Clear() const {
  v1::EvictResponse response;
  if (absl::Status s = impl_->Call(&v1::JitCache::Stub::Clear,
                                   v1::ClearRequest(), &response);
      !s.ok()) {
    return s;
  }
  return FromWire(response);
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
StoreAdmin::Config() const {
  v1::ConfigResponse response;
  if (absl::Status s = impl_->Call(&v1::JitCache::Stub::GetConfig,
                                   v1::ConfigRequest(), &response);
      !s.ok()) {
    return s;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& setting : response.settings()) {
    out.emplace_back(setting.name(), setting.value());
  }
  return out;
}

absl::StatusOr<std::pair<std::vector<StoreEntry>, uint64_t>> StoreAdmin::List(
    const ListOptions& options) const {
  const v1::ListEntriesRequest request = ToListEntriesRequest(options);
  v1::ListEntriesResponse response;
  if (absl::Status s =
          impl_->Call(&v1::JitCache::Stub::ListEntries, request, &response);
      !s.ok()) {
    return s;
  }
  std::vector<StoreEntry> entries;
  for (const v1::EntryInfo& e : response.entries()) {
    absl::StatusOr<StoreEntry> entry = FromWire(e);
    if (!entry.ok()) return entry.status();
    entries.push_back(*std::move(entry));
  }
  return std::make_pair(std::move(entries), response.matching());
}

absl::StatusOr<StoreEntry> StoreAdmin::Show(
    const std::string& key_prefix) const {
  v1::ShowEntryRequest request;
  request.set_key_prefix(key_prefix);
  v1::ShowEntryResponse response;
  if (absl::Status s =
          impl_->Call(&v1::JitCache::Stub::ShowEntry, request, &response);
      !s.ok()) {
    return s;
  }
  return FromWire(response.entry());
}

absl::StatusOr<BundleReport> StoreAdmin::Export(
    const std::string& path, const ExportFilter& filter,
    const ProgressFn& progress) const {
  v1::ExportRequest request;
  for (const auto& a : filter.archs) request.add_archs(a);
  for (const auto& k : filter.key_prefixes) request.add_key_prefixes(k);
  request.set_max_bytes(kBatchBytes);
  std::optional<BundleWriter> writer;
  uint64_t total = 0;
  while (true) {
    v1::ExportResponse page;
    if (absl::Status s =
            impl_->Call(&v1::JitCache::Stub::ExportEntries, request, &page);
        !s.ok()) {
      return s;
    }
    if (!writer.has_value()) {
      total = page.matching();
      v1::BundleHeader header;
      header.set_format_version(kBundleFormatVersion);
      header.set_toolchain_fingerprint(page.toolchain_fingerprint());
      header.set_toolchain(page.toolchain());
      header.set_key_schema_version(page.key_schema_version());
      header.set_created_unix_ms(absl::ToUnixMillis(absl::Now()));
      header.set_entries(total);
      absl::StatusOr<BundleWriter> created = BundleWriter::Create(path, header);
      if (!created.ok()) return created.status();
      writer.emplace(*std::move(created));
    }
    for (const v1::BundleEntry& entry : page.entries()) {
      if (absl::Status s = writer->Add(entry); !s.ok()) return s;
    }
    if (progress) progress(writer->entries(), total);
    if (page.next_after_key().empty()) break;
    request.set_after_key(page.next_after_key());
  }
  if (absl::Status s = writer->Finish(); !s.ok()) return s;
  BundleReport report;
  report.entries = writer->entries();
  report.bytes = writer->bytes();
  return report;
}

absl::StatusOr<BundleReport> StoreAdmin::Import(
    const std::string& path, const ProgressFn& progress) const {
  BundleReport report;
  // First pass: the whole file must be sound before anything is sent.
  {
    absl::StatusOr<BundleReader> reader = BundleReader::Open(path);
    if (!reader.ok()) return reader.status();
    report.bytes = reader->file_size();
    while (true) {
      absl::StatusOr<std::optional<v1::BundleEntry>> entry = reader->Next();
      if (!entry.ok()) {
        return absl::Status(
            entry.status().code(),
            absl::StrCat(entry.status().message(), "; nothing was imported"));
      }
      if (!entry->has_value()) break;
      if (absl::Status s = CheckBundleEntry(**entry); !s.ok()) {
        return absl::DataLossError(
            absl::StrCat(path, ": ", s.message(), "; nothing was imported"));
      }
      ++report.entries;
    }
  }
  absl::StatusOr<BundleReader> reader = BundleReader::Open(path);
  if (!reader.ok()) return reader.status();
  uint64_t sent = 0;
  bool asked = false;
  auto send = [&](v1::ImportRequest& request) -> absl::Status {
    // An empty bundle still asks once: the daemon decides who may import.
    if (request.entries_size() == 0 && asked) return absl::OkStatus();
    asked = true;
    v1::ImportResponse response;
    if (absl::Status s =
            impl_->Call(&v1::JitCache::Stub::ImportEntries, request, &response);
        !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat(s.message(), " (after ", report.imported,
                                       " entries were imported whole)"));
    }
    report.imported += response.imported();
    report.already_present += response.already_present();
    report.other_toolchain += response.other_toolchain();
    report.corrupt += response.corrupt();
    for (const std::string& p : response.problems()) {
      if (report.problems.size() < 20) report.problems.push_back(p);
    }
    sent += request.entries_size();
    if (progress) progress(sent, report.entries);
    request.Clear();
    return absl::OkStatus();
  };
  v1::ImportRequest batch;
  uint64_t batch_bytes = 0;
  while (true) {
    absl::StatusOr<std::optional<v1::BundleEntry>> entry = reader->Next();
    if (!entry.ok()) return entry.status();
    if (!entry->has_value()) break;
    const uint64_t size = (*entry)->ByteSizeLong();
    if (batch_bytes + size > kBatchBytes) {
      if (absl::Status s = send(batch); !s.ok()) return s;
      batch_bytes = 0;
    }
    *batch.add_entries() = **std::move(entry);
    batch_bytes += size;
  }
  if (absl::Status s = send(batch); !s.ok()) return s;
  return report;
}

}  // namespace jitcache
