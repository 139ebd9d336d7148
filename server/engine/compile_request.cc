#include "server/engine/compile_request.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/cache_key.h"
#include "common/compile_options.h"
#include "common/compile_place.h"
#include "common/paths.h"
#include "common/plain_status_absl.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {
namespace {

// The set's digest: from the list when there is one (each path absolute,
// lexically normal and unique; the digests are the contents', and must
// match any given), keyed by the paths anchored at `place`, else as given,
// in which case only a hit can be answered (`has_contents` false, unless
// the set is empty). Fills the anchored paths, order and times of `out`.
// A set named by its digest alone: only a hit can be answered, unless the
// set is empty.
absl::Status CheckSetByDigest(const v1::CompileRequest& request,
                              const RequestLimits& limits,
                              PreparedCompile* out) {
  static const Digest kEmptySet = IncludedSetDigest({});
  std::optional<Digest> given =
      Digest::FromBytes(request.included_set_sha256());
  if (!given.has_value()) {
    return absl::InvalidArgumentError(
        "includes_resolved needs included_set_sha256 (32 bytes) or "
        "included_files");
  }
  if (absl::Status s =
          CheckCount("included file times", request.included_mtimes_ns_size(),
                     limits.max_included_files);
      !s.ok()) {
    return s;
  }
  out->included_set = *given;
  out->has_included_contents = out->included_set == kEmptySet;
  if (out->has_included_contents && request.included_mtimes_ns_size() > 0) {
    return absl::InvalidArgumentError(
        "included_mtimes_ns are given for an empty set of files");
  }
  out->file_mtimes_ns.assign(request.included_mtimes_ns().begin(),
                             request.included_mtimes_ns().end());
  return absl::OkStatus();
}

// Each carried file: an absolute, normal path given once, within the
// limits, no NUL byte.
absl::Status CheckCarriedFiles(const v1::CompileRequest& request,
                               const RequestLimits& limits) {
  if (request.included_mtimes_ns_size() > 0) {
    return absl::InvalidArgumentError(
        "included_mtimes_ns go with included_set_sha256 alone; "
        "included_files carry their own");
  }
  if (absl::Status s =
          CheckCount("included files", request.included_files_size(),
                     limits.max_included_files);
      !s.ok()) {
    return s;
  }
  absl::flat_hash_set<absl::string_view> paths;
  for (const v1::IncludedFile& file : request.included_files()) {
    const std::string& path = file.path();
    if (!IsNormalAbsolutePath(path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "included file '", path, "' is not an absolute, normal path"));
    }
    if (!paths.insert(path).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("included file '", path, "' is given twice"));
    }
    if (absl::Status s =
            CheckSize(absl::StrCat("included file '", path, "'"),
                      file.contents().size(), limits.max_header_bytes);
        !s.ok()) {
      return s;
    }
    if (file.contents().find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("included file '", path, "' contains a NUL byte"));
    }
  }
  return absl::OkStatus();
}

// The carried files by anchored path: their set's digest (which must match
// the one given, if any) and each one's order, time and contents' digest
// (which must match its sha256, if given).
absl::Status DigestCarriedFiles(const v1::CompileRequest& request,
                                const CompilePlace& place,
                                PreparedCompile* out) {
  std::vector<std::pair<std::string, int>> anchored;
  for (int i = 0; i < request.included_files_size(); ++i) {
    anchored.emplace_back(place.Anchored(request.included_files(i).path()), i);
  }
  std::sort(anchored.begin(), anchored.end());
  std::vector<Digest> digests;
  digests.reserve(anchored.size());
  std::vector<std::pair<std::string_view, std::string_view>> files;
  for (const auto& [path, i] : anchored) {
    const v1::IncludedFile& file = request.included_files(i);
    digests.push_back(Digest::Of(file.contents()));
    if (!file.sha256().empty() && file.sha256() != digests.back().AsBytes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("included file '", file.path(),
                       "': contents do not match its sha256"));
    }
    out->file_order.push_back(i);
    out->file_mtimes_ns.push_back(file.mtime_ns());
  }
  for (size_t i = 0; i < digests.size(); ++i) {
    files.emplace_back(anchored[i].first, digests[i].AsBytes());
  }
  out->included_set = IncludedSetDigest(std::move(files));
  for (auto& [path, i] : anchored) {
    out->anchored_paths.push_back(std::move(path));
  }
  if (!request.included_set_sha256().empty() &&
      request.included_set_sha256() != out->included_set.AsBytes()) {
    return absl::InvalidArgumentError(
        "included_set_sha256 is not the digest of included_files");
  }
  return absl::OkStatus();
}

absl::Status CheckIncludedFiles(const v1::CompileRequest& request,
                                const RequestLimits& limits,
                                const CompilePlace& place,
                                PreparedCompile* out) {
  if (request.included_files_size() == 0) {
    return CheckSetByDigest(request, limits, out);
  }
  if (absl::Status s = CheckCarriedFiles(request, limits); !s.ok()) return s;
  out->has_included_contents = true;
  return DigestCarriedFiles(request, place, out);
}

}  // namespace

namespace {

// The source and the counts: within the limits, no NUL byte.
absl::Status CheckSources(const v1::CompileRequest& request,
                          const RequestLimits& limits) {
  if (absl::Status s =
          CheckSize("source", request.source().size(), limits.max_source_bytes);
      !s.ok()) {
    return s;
  }
  if (request.source().find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("source contains a NUL byte");
  }
  for (absl::Status s :
       {CheckCount("headers", request.headers_size(), limits.max_headers),
        CheckCount("options", request.options_size(), limits.max_options),
        CheckCount("name expressions", request.name_expressions_size(),
                   limits.max_name_expressions)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// The headers' names and contents and the name expressions: no NUL byte,
// no header given twice.
absl::Status CheckHeadersAndNames(const v1::CompileRequest& request,
                                  const RequestLimits& limits) {
  absl::flat_hash_set<absl::string_view> header_names;
  for (const v1::Header& header : request.headers()) {
    if (header.name().empty() ||
        header.name().find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          "a header name is empty or contains a NUL byte");
    }
    if (absl::Status s =
            CheckSize(absl::StrCat("header '", header.name(), "'"),
                      header.contents().size(), limits.max_header_bytes);
        !s.ok()) {
      return s;
    }
    if (header.contents().find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("header '", header.name(), "' contains a NUL byte"));
    }
    if (!header_names.insert(header.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("header '", header.name(), "' is given twice"));
    }
  }
  for (const std::string& expr : request.name_expressions()) {
    if (expr.empty() || expr.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          "a name expression is empty or contains a NUL byte");
    }
  }
  return absl::OkStatus();
}

// The working directory and the included files' fields: a normal absolute
// directory, and files only with includes_resolved.
absl::Status CheckPlaceFields(const v1::CompileRequest& request) {
  if (!request.includes_resolved() && request.included_files_size() > 0) {
    return absl::InvalidArgumentError(
        "included_files are given but includes_resolved is not set");
  }
  const std::string& cwd = request.working_directory();
  if (!cwd.empty() && cwd != "/" && !IsNormalAbsolutePath(cwd)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "working_directory '", cwd, "' is not an absolute, normal path"));
  }
  if (!request.includes_resolved() && request.included_mtimes_ns_size() > 0) {
    return absl::InvalidArgumentError(
        "included_mtimes_ns are given but includes_resolved is not set");
  }
  return absl::OkStatus();
}

// Source and header bytes, and the name expressions sorted and unique.
void DescribeSources(const v1::CompileRequest& request, PreparedCompile& out) {
  out.source_bytes = request.source().size();
  for (const auto& header : request.headers()) {
    out.source_bytes += header.contents().size();
  }
  out.name_expressions.assign(request.name_expressions().begin(),
                              request.name_expressions().end());
  std::sort(out.name_expressions.begin(), out.name_expressions.end());
  out.name_expressions.erase(
      std::unique(out.name_expressions.begin(), out.name_expressions.end()),
      out.name_expressions.end());
}

// The place-free key (without the program's name), the named one, and those
// of the place and of the working directory.
void ComputeKeys(const v1::CompileRequest& request,
                 const ToolchainInfo& toolchain, const CompilePlace& place,
                 PreparedCompile& out) {
  CompileKeyInput key;
  key.toolchain_fingerprint = toolchain.fingerprint;
  key.target = out.target;
  key.arch = out.arch;
  key.options = out.options;
  const std::string program = place.ProgramWithoutNameForKey();
  key.program = program;
  key.source = request.source();
  for (const v1::Header& header : request.headers()) {
    key.headers.emplace_back(header.name(), header.contents());
  }
  for (const std::string& e : out.name_expressions) {
    key.name_expressions.push_back(e);
  }
  key.includes_resolved = request.includes_resolved();
  key.included_set = out.included_set;
  key.exact_include_path = request.exact_include_path();
  out.key = ComputeCompileKey(key);
  out.named_key = ComputeNamedCompileKey(out.key, place.ProgramForKey());
  // The place's keys hold the name: built on the named key.
  out.placed_key =
      ComputePlacedCompileKey({out.named_key, out.working_directory,
                               out.program_name, out.file_mtimes_ns});
  out.place_key_without_times =
      ComputePlacedCompileKey({.place_free = out.named_key,
                               .working_directory = out.working_directory,
                               .program_name = out.program_name,
                               .file_mtimes_ns = {},
                               .without_file_times = true});
  out.working_directory_key =
      ComputePlacedCompileKey({.place_free = out.named_key,
                               .working_directory = out.working_directory,
                               .program_name = {},
                               .file_mtimes_ns = {},
                               .working_directory_only = true});
}

}  // namespace

absl::StatusOr<PreparedCompile> PrepareCompile(
    const v1::CompileRequest& request, const ToolchainInfo& toolchain,
    const RequestLimits& limits) {
  if (absl::Status s = CheckSources(request, limits); !s.ok()) return s;
  const std::optional<ObjectKind> target = FromWireTarget(request.target());
  if (!target) {
    return absl::InvalidArgumentError(
        "target must be PTX, CUBIN, LTOIR or OPTIXIR");
  }
  PreparedCompile out;
  out.target = *target;
  out.program_name =
      request.program_name().empty() ? "program.cu" : request.program_name();
  if (out.program_name.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("program_name contains a NUL byte");
  }
  if (absl::Status s = CheckHeadersAndNames(request, limits); !s.ok()) {
    return s;
  }
  const std::vector<std::string> raw_options(request.options().begin(),
                                             request.options().end());
  OptionPolicy policy;
  policy.supported_archs = toolchain.supported_archs;
  absl::StatusOr<CanonicalOptions> options =
      ToAbsl(CanonicalizeCompileOptions(raw_options, *target, policy),
             absl::StatusCode::kInvalidArgument);
  if (!options.ok()) return options.status();
  if (absl::Status s = CheckPlaceFields(request); !s.ok()) return s;
  out.working_directory = request.working_directory();
  const CompilePlace place(out.working_directory, out.program_name);
  if (request.includes_resolved()) {
    if (absl::Status s = CheckIncludedFiles(request, limits, place, &out);
        !s.ok()) {
      return s;
    }
  }
  out.options = std::move(options->options);
  out.arch = options->arch;
  DescribeSources(request, out);
  out.exact_include_path = request.exact_include_path();
  out.wait_for_proof = request.wait_for_proof();
  ComputeKeys(request, toolchain, place, out);
  return out;
}

std::vector<std::pair<std::string, std::string>> CarriedFiles(
    const v1::CompileRequest& request, const PreparedCompile& prepared) {
  std::vector<std::pair<std::string, std::string>> files;
  files.reserve(prepared.file_order.size());
  for (size_t i = 0; i < prepared.file_order.size(); ++i) {
    files.emplace_back(
        prepared.anchored_paths[i],
        request.included_files(prepared.file_order[i]).contents());
  }
  return files;
}

CompileJob MakeCompileJob(const v1::CompileRequest& request,
                          const PreparedCompile& prepared) {
  CompileJob job;
  job.program_name = prepared.program_name;
  job.source = request.source();
  for (const v1::Header& header : request.headers()) {
    job.headers.emplace_back(header.name(), header.contents());
  }
  job.toolkit_include_dirs = !prepared.exact_include_path;
  job.working_directory = prepared.working_directory;
  job.file_mtimes_ns = prepared.file_mtimes_ns;
  job.options = prepared.options;
  job.name_expressions = prepared.name_expressions;
  job.target = prepared.target;
  return job;
}

}  // namespace jitcache
