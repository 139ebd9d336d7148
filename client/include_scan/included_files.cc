#include "client/include_scan/included_files.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/include_scan/include_scan.h"
#include "common/cache_key.h"
#include "common/compile_options.h"
#include "common/compile_place.h"
#include "common/paths.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache::internal {
namespace {

// The toolkit directory `dir` is, or lies in, by its real path; "" if none.
std::string InToolkit(const std::string& dir,
                      const std::vector<std::string>& toolkit_dirs) {
  std::error_code ec;
  const std::string real = std::filesystem::weakly_canonical(dir, ec).string();
  if (ec) return "";
  for (const std::string& t : toolkit_dirs) {
    if (IsUnder(real, t, true)) return real;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ScanResult>> ResolveIncludes(
    const Toolkit& toolkit, v1::CompileRequest* request) {
  const std::vector<std::string>& toolkit_dirs = toolkit.include_dirs;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("the working directory is unknown: ", ec.message()));
  }
  const std::vector<std::string> raw(request->options().begin(),
                                     request->options().end());
  absl::StatusOr<std::vector<std::string>> ordered = OrderedCompileOptions(raw);
  // Options the daemon will refuse: let it say why.
  if (!ordered.ok()) return nullptr;

  ScanInput scan;
  scan.cwd = cwd;
  scan.toolkit_fingerprint = toolkit.fingerprint;
  for (const std::string& option : *ordered) {
    if (absl::StartsWith(option, kIncludePathOption)) {
      const std::string dir = option.substr(kIncludePathOption.size());
      if (std::string real = InToolkit(dir, toolkit_dirs); !real.empty()) {
        scan.dirs.push_back({real, true, ""});
      } else {
        const std::string spelled =
            dir.empty() || dir[0] != '/' ? cwd + "/" + dir : dir;
        scan.dirs.push_back({spelled, false, spelled});
      }
    } else if (absl::StartsWith(option, kPreIncludeOption)) {
      scan.pre_includes.push_back(option.substr(kPreIncludeOption.size()));
    } else if (absl::StartsWith(option, kDefineMacroOption)) {
      scan.defines.push_back(option.substr(kDefineMacroOption.size()));
    }
  }
  for (SearchDir& dir : scan.dirs) {
    if (!dir.toolkit) {
      dir.path = std::filesystem::path(dir.path).lexically_normal().string();
      while (dir.path.size() > 1 && dir.path.back() == '/') dir.path.pop_back();
    }
  }
  // The daemon searches its toolkit after the program's directories,
  // unless told not to.
  if (!request->exact_include_path()) {
    for (const std::string& t : toolkit_dirs)
      scan.dirs.push_back({t, true, ""});
  }

  scan.program_name = request->program_name().empty()
                          ? absl::string_view("program.cu")
                          : absl::string_view(request->program_name());
  scan.source = request->source();
  for (const v1::Header& h : request->headers()) {
    scan.header_names.push_back(h.name());
    scan.header_bodies.push_back(h.contents());
  }
  absl::StatusOr<std::shared_ptr<const ScanResult>> included =
      IncludeScanner::ForProcess().Scan(scan);
  if (!included.ok()) return included.status();

  request->set_working_directory(cwd);
  request->set_includes_resolved(true);
  // Keyed relative to the place (compile_place.h): the same layout in
  // another directory is the same set. The times go along in the set's
  // order, for the keys of compiles whose answer records them.
  const CompilePlace place(cwd, scan.program_name);
  std::vector<std::pair<std::string, const ScannedFile*>> anchored;
  for (const ScannedFile& file : (*included)->files) {
    anchored.emplace_back(place.Anchored(file.path), &file);
  }
  std::sort(anchored.begin(), anchored.end());
  std::vector<std::pair<absl::string_view, absl::string_view>> set;
  request->clear_included_mtimes_ns();
  for (const auto& [path, file] : anchored) {
    set.emplace_back(path, file->digest.AsBytes());
    request->add_included_mtimes_ns(file->mtime_ns);
  }
  request->set_included_set_sha256(
      std::string(IncludedSetDigest(std::move(set)).AsBytes()));
  return included;
}

absl::Status AttachIncludedFiles(const ScanResult& included,
                                 v1::CompileRequest* request) {
  request->clear_included_files();
  // An empty set is sent by its digest: there are no files to send.
  if (included.files.empty()) return absl::OkStatus();
  request->clear_included_set_sha256();
  request->clear_included_mtimes_ns();
  for (const ScannedFile& file : included.files) {
    // The daemon hashes what it is sent; hashing here too would only
    // double the work of a miss.
    absl::StatusOr<std::string> contents =
        IncludeScanner::Read(file.path, nullptr);
    if (!contents.ok()) return contents.status();
    v1::IncludedFile* out = request->add_included_files();
    out->set_path(file.path);
    out->set_contents(*std::move(contents));
    out->set_mtime_ns(file.mtime_ns);
  }
  return absl::OkStatus();
}

}  // namespace jitcache::internal
