#include "client/include_scan/included_files.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "client/include_scan/include_scan.h"
#include "common/cache_key.h"
#include "common/compile_options.h"
#include "common/compile_place.h"
#include "common/paths.h"
#include "common/plain_status.h"
#include "common/text.h"

namespace jitcache::internal {

PlainStatusOr<ResolvedIncludes> ResolveIncludes(const Toolkit& toolkit,
                                                const IncludeRequest& request) {
  const std::vector<std::string>& toolkit_dirs = toolkit.include_dirs;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (ec) {
    return PlainStatus::Error(
        text::Cat("the working directory is unknown: ", ec.message()));
  }
  PlainStatusOr<std::vector<std::string>> ordered =
      OrderedCompileOptions(request.options);
  // Options the daemon will refuse: let it say why.
  if (!ordered.ok()) return ResolvedIncludes();

  ScanInput scan;
  scan.cwd = cwd;
  scan.toolkit_fingerprint = toolkit.fingerprint;
  for (const std::string& option : *ordered) {
    if (text::StartsWith(option, kIncludePathOption)) {
      const std::string dir = option.substr(kIncludePathOption.size());
      const std::string absolute =
          dir.empty() || dir[0] != '/' ? cwd + "/" + dir : dir;
      if (std::string real =
              IncludeScanner::ForProcess().ToolkitDirOf(absolute, toolkit_dirs);
          !real.empty()) {
        scan.dirs.push_back({real, true, ""});
      } else {
        scan.dirs.push_back({absolute, false, absolute});
      }
    } else if (text::StartsWith(option, kPreIncludeOption)) {
      scan.pre_includes.push_back(option.substr(kPreIncludeOption.size()));
    } else if (text::StartsWith(option, kDefineMacroOption)) {
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
  if (!request.exact_include_path) {
    for (const std::string& t : toolkit_dirs)
      scan.dirs.push_back({t, true, ""});
  }

  scan.program_name = request.program_name.empty()
                          ? std::string_view("program.cu")
                          : request.program_name;
  scan.source = request.source;
  for (const auto& [name, contents] : request.headers) {
    scan.header_names.push_back(name);
    scan.header_bodies.push_back(contents);
  }
  PlainStatusOr<std::shared_ptr<const ScanResult>> included =
      IncludeScanner::ForProcess().Scan(scan);
  if (!included.ok()) return included.status();

  ResolvedIncludes out;
  out.working_directory = cwd;
  // Keyed relative to the place (compile_place.h): the same layout in
  // another directory is the same set. The times go along in the set's
  // order, for the keys of compiles whose answer records them.
  const CompilePlace place(cwd, scan.program_name);
  std::vector<std::pair<std::string, const ScannedFile*>> anchored;
  for (const ScannedFile& file : (*included)->files) {
    anchored.emplace_back(place.Anchored(file.path), &file);
  }
  std::sort(anchored.begin(), anchored.end());
  std::vector<std::pair<std::string_view, std::string_view>> set;
  for (const auto& [path, file] : anchored) {
    set.emplace_back(path, file->digest.AsBytes());
    out.mtimes_ns.push_back(file->mtime_ns);
  }
  out.included_set = IncludedSetDigest(std::move(set));
  out.included = *std::move(included);
  return out;
}

PlainStatusOr<std::vector<IncludedFileBytes>> ReadIncludedFiles(
    const ScanResult& included) {
  std::vector<IncludedFileBytes> files;
  for (const ScannedFile& file : included.files) {
    // The daemon hashes what it is sent; hashing here too would only
    // double the work of a miss.
    PlainStatusOr<std::string> contents =
        IncludeScanner::Read(file.path, nullptr);
    if (!contents.ok()) return contents.status();
    files.push_back({file.path, *std::move(contents), file.mtime_ns});
  }
  return files;
}

}  // namespace jitcache::internal
