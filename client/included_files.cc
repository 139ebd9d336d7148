#include "client/included_files.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "client/include_scan.h"
#include "client/wire_types.h"
#include "common/cache_key.h"
#include "common/compile_options.h"
#include "common/paths.h"

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

bool MayNameIncludeDirs(const v1::CompileRequest& request) {
  for (const std::string& o : request.options()) {
    if (absl::StartsWith(o, "-I") || absl::StrContains(o, "include-path")) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::shared_ptr<const ScanResult>> ResolveIncludes(
    const std::vector<std::string>& toolkit_dirs, v1::CompileRequest* request) {
  std::error_code ec;
  OptionPolicy policy;
  policy.allowed_include_dirs = toolkit_dirs;
  policy.any_absolute_include_dir = true;
  policy.relative_include_base = std::filesystem::current_path(ec).string();
  const std::vector<std::string> raw(request->options().begin(),
                                     request->options().end());
  absl::StatusOr<CanonicalOptions> canonical = CanonicalizeCompileOptions(
      raw, ObjectKindOf(FromWireTarget(request->target())), policy);
  // Options the daemon will refuse: let it say why.
  if (!canonical.ok()) return nullptr;

  ScanInput scan;
  bool any_user_dir = false;
  for (std::string& option : canonical->options) {
    if (absl::StartsWith(option, kIncludePathOption)) {
      const std::string dir = option.substr(kIncludePathOption.size());
      if (std::string real = InToolkit(dir, toolkit_dirs); !real.empty()) {
        option = std::string(kIncludePathOption) + real;
        scan.dirs.push_back({real, true});
      } else {
        scan.dirs.push_back({dir, false});
        any_user_dir = true;
      }
    } else if (absl::StartsWith(option, kPreIncludeOption)) {
      scan.pre_includes.push_back(option.substr(kPreIncludeOption.size()));
    } else if (absl::StartsWith(option, kDefineMacroOption)) {
      scan.defines.push_back(option.substr(kDefineMacroOption.size()));
    }
  }
  auto set_options = [&] {
    request->clear_options();
    for (std::string& option : canonical->options) {
      request->add_options(std::move(option));
    }
  };
  if (!any_user_dir) {
    // Toolkit directories only, now by the real path the daemon knows
    // them by (-I$CUDA_HOME/include through a symlink, say).
    set_options();
    return nullptr;
  }
  // The daemon searches its toolkit after the program's directories,
  // unless told not to.
  if (!request->exact_include_path()) {
    for (const std::string& t : toolkit_dirs) scan.dirs.push_back({t, true});
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

  set_options();
  request->set_includes_resolved(true);
  request->set_included_set_sha256(std::string((*included)->set.AsBytes()));
  return included;
}

absl::Status AttachIncludedFiles(const ScanResult& included,
                                 v1::CompileRequest* request) {
  request->clear_included_files();
  request->clear_included_set_sha256();
  for (const ScannedFile& file : included.files) {
    // The daemon hashes what it is sent; hashing here too would only
    // double the work of a miss.
    absl::StatusOr<std::string> contents =
        IncludeScanner::Read(file.path, nullptr);
    if (!contents.ok()) return contents.status();
    v1::IncludedFile* out = request->add_included_files();
    out->set_path(file.path);
    out->set_contents(*std::move(contents));
  }
  return absl::OkStatus();
}

}  // namespace jitcache::internal
