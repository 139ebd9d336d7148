#include "client/api/compile_includes.h"

#include <string>
#include <vector>

#include "common/plain_status_absl.h"

namespace jitcache::internal {

absl::StatusOr<std::shared_ptr<const ScanResult>> ResolveIncludes(
    const Toolkit& toolkit, v1::CompileRequest* request) {
  const std::vector<std::string> options(request->options().begin(),
                                         request->options().end());
  IncludeRequest asked;
  asked.options = options;
  asked.program_name = request->program_name();
  asked.source = request->source();
  for (const v1::Header& h : request->headers()) {
    asked.headers.emplace_back(h.name(), h.contents());
  }
  asked.exact_include_path = request->exact_include_path();
  PlainStatusOr<ResolvedIncludes> resolved = ResolveIncludes(toolkit, asked);
  if (!resolved.ok()) {
    return ToAbsl(resolved.status(), absl::StatusCode::kFailedPrecondition);
  }
  if (resolved->included == nullptr) return nullptr;
  request->set_working_directory(resolved->working_directory);
  request->set_includes_resolved(true);
  request->clear_included_mtimes_ns();
  for (int64_t t : resolved->mtimes_ns) request->add_included_mtimes_ns(t);
  request->set_included_set_sha256(
      std::string(resolved->included_set.AsBytes()));
  return resolved->included;
}

absl::Status AttachIncludedFiles(const ScanResult& included,
                                 v1::CompileRequest* request) {
  request->clear_included_files();
  // An empty set is sent by its digest: there are no files to send.
  if (included.files.empty()) return absl::OkStatus();
  PlainStatusOr<std::vector<IncludedFileBytes>> files =
      ReadIncludedFiles(included);
  if (!files.ok()) {
    return ToAbsl(files.status(), absl::StatusCode::kFailedPrecondition);
  }
  request->clear_included_set_sha256();
  request->clear_included_mtimes_ns();
  for (IncludedFileBytes& file : *files) {
    v1::IncludedFile* out = request->add_included_files();
    out->set_path(std::move(file.path));
    out->set_contents(std::move(file.contents));
    out->set_mtime_ns(file.mtime_ns);
  }
  return absl::OkStatus();
}

}  // namespace jitcache::internal
