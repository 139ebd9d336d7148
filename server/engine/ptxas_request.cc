#include "server/engine/ptxas_request.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cache_key.h"
#include "common/option_parser.h"
#include "common/paths.h"
#include "common/place_anchor.h"
#include "common/plain_status_absl.h"
#include "common/ptx_sources.h"
#include "common/ptxas_command.h"
#include "server/build/toolkit_library.h"

namespace jitcache {
namespace {

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Whether `result` holds `text` anywhere a caller sees.
bool Shows(const ActionResult& result, const std::string& text) {
  return absl::StrContains(result.log, text) ||
         absl::StrContains(result.object, text) ||
         (result.ptxas_run.has_value() &&
          absl::StrContains(result.ptxas_run->stdout(), text));
}

// A request the caller's own ptxas answers (jitcache-ptxas runs it).
absl::Status ForTheRealPtxas(absl::string_view why) {
  return absl::FailedPreconditionError(
      absl::StrCat("for the real ptxas: ", why));
}

// The path the caller's ptxas opens for `spelled`, run in `cwd`; error
// for one with ".." in it, which the kernel resolves through the caller's
// symbolic links, not lexically as the view would.
absl::StatusOr<std::string> PathInView(const std::string& cwd,
                                       const std::string& spelled) {
  const std::filesystem::path path(spelled);
  for (const std::filesystem::path& part : path) {
    if (part == "..") {
      return ForTheRealPtxas(absl::StrCat("the path ", spelled, " has .."));
    }
  }
  return (std::filesystem::path(cwd) / path).lexically_normal().string();
}

// The key of `request` as `prepared` reads it, with the file names when
// `names` (their last parts alone when `base_names_only`).
Digest KeyOf(const v1::PtxasRequest& request, const PreparedPtxas& prepared,
             bool names, bool base_names_only = false) {
  const std::vector<std::string> without_names =
      prepared.command.WithoutNames();
  std::vector<PtxasKeyInput::Source> sources;
  for (const v1::PtxasSource& s : request.sources()) {
    sources.push_back({s.path(), s.exists(), s.size(), s.mtime_ns()});
  }
  const std::string output = prepared.command.output_path();
  PtxasKeyInput key{prepared.ptxas->sha256, request.program(), without_names,
                    request.ptx(),          std::nullopt,      sources};
  const std::string input_base = BaseName(prepared.command.input_path());
  const std::string output_base = BaseName(output);
  if (names && base_names_only) {
    key.names = PtxasKeyInput::Names{input_base, output_base, true};
  } else if (names) {
    key.names = PtxasKeyInput::Names{prepared.command.input_path(), output};
  }
  return ComputePtxasKey(key);
}

}  // namespace

absl::StatusOr<PreparedPtxas> PreparePtxas(const v1::PtxasRequest& request,
                                           const ToolchainInfo& toolchain,
                                           const RequestLimits& limits) {
  PreparedPtxas out;
  for (const ToolchainInfo::Library& known : toolchain.ptxas) {
    if (known.path == request.ptxas().path() &&
        known.stamp == StampOfLibrary(request.ptxas())) {
      out.ptxas = &known;
    }
  }
  if (out.ptxas == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ptxas ", request.ptxas().path(),
        " is not one this daemon runs (jitcached --ptxas registers one)"));
  }
  for (absl::Status s :
       {CheckSize("ptx", request.ptx().size(), limits.max_source_bytes),
        CheckCount("arguments", request.arguments_size(), limits.max_options),
        ToAbsl(
            option_parser::CheckCString("the program name", request.program()),
            absl::StatusCode::kInvalidArgument),
        ToAbsl(option_parser::CheckCString("the working directory",
                                           request.working_directory()),
               absl::StatusCode::kInvalidArgument)}) {
    if (!s.ok()) return s;
  }
  const std::string& cwd = request.working_directory();
  if (cwd != "/" && !IsNormalAbsolutePath(cwd)) {
    return absl::InvalidArgumentError(
        "the working directory must be absolute and normal");
  }
  for (const std::string& argument : request.arguments()) {
    if (absl::Status s =
            ToAbsl(option_parser::CheckCString("a ptxas argument", argument),
                   absl::StatusCode::kInvalidArgument);
        !s.ok()) {
      return s;
    }
  }
  std::string why;
  std::optional<PtxasCommand> command = ParsePtxasCommand(
      {request.arguments().begin(), request.arguments().end()}, &why);
  if (!command.has_value()) return ForTheRealPtxas(why);
  out.command = *std::move(command);
  absl::StatusOr<std::string> input_path =
      PathInView(cwd, out.command.input_path());
  if (!input_path.ok()) return input_path.status();
  absl::StatusOr<std::string> output_path =
      PathInView(cwd, out.command.output_path());
  if (!output_path.ok()) return output_path.status();
  out.input_path = *std::move(input_path);
  out.output_path = *std::move(output_path);

  // The request says what the caller's stat said of each source the PTX
  // names, and of nothing else.
  std::optional<std::vector<std::string>> sources =
      PtxSourceFiles(request.ptx(), &why);
  if (!sources.has_value()) return ForTheRealPtxas(why);
  if (static_cast<size_t>(request.sources_size()) != sources->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the PTX names ", sources->size(),
                     " sources, the request ", request.sources_size()));
  }
  for (int i = 0; i < request.sources_size(); ++i) {
    if (request.sources(i).path() != (*sources)[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("source ", i, " is not the one the PTX names"));
    }
    absl::StatusOr<std::string> path =
        PathInView(cwd, request.sources(i).path());
    if (!path.ok()) return path.status();
    out.source_paths.push_back(*std::move(path));
  }
  out.key = KeyOf(request, out, request.with_names());
  if (request.with_names()) {
    out.base_named_key = KeyOf(request, out, true, /*base_names_only=*/true);
  }
  return out;
}

PtxasMiss MakePtxasMiss(const v1::PtxasRequest& request,
                        const PreparedPtxas& prepared) {
  PtxasMiss miss;
  PtxasJob& job = miss.job;
  job.ptxas = *prepared.ptxas;
  job.program = request.program();
  job.arguments = prepared.command.arguments;
  job.ptx = request.ptx();
  job.working_directory = request.working_directory();
  job.input_path = prepared.input_path;
  job.output_path = prepared.output_path;
  for (int i = 0; i < request.sources_size(); ++i) {
    const v1::PtxasSource& source = request.sources(i);
    job.sources.push_back({prepared.source_paths[i], source.exists(),
                           source.size(), source.mtime_ns()});
  }
  if (!request.with_names()) {
    miss.named_key = KeyOf(request, prepared, /*names=*/true);
  }
  miss.base_named_key =
      KeyOf(request, prepared, true, /*base_names_only=*/true);
  miss.spelled = {prepared.command.input_path(),
                  prepared.command.output_path()};
  // Each file name as spelled and its last part: what ptxas prints in its
  // messages and embeds with -g. Not the directories: nothing ptxas
  // writes was found to hold one without the file's name (the
  // differential test's runs in other directories say so), while the PTX
  // itself often names files there (Triton's line information: the
  // kernel's Python source, Inductor's cache directory).
  for (const std::string& name :
       {prepared.command.input_path(), prepared.command.output_path()}) {
    for (const std::string& shown :
         {name, std::filesystem::path(name).filename().string()}) {
      if (!shown.empty()) miss.names.push_back(shown);
    }
  }
  return miss;
}

bool AnswerShowsNames(const ActionResult& result,
                      const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (Shows(result, name)) return true;
  }
  return false;
}

bool AnswerShowsBaseNamesOnly(const ActionResult& result,
                              const std::vector<std::string>& spelled) {
  for (const std::string& name : spelled) {
    if (name.empty()) continue;
    // A spelling ptxas might print otherwise ("a//k.ptx" as "a/k.ptx")
    // tells nothing.
    if (LexicallyNormal(name) != name) return false;
    const std::string base = BaseName(name);
    if (name == base) {
      if (Shows(result, base)) return false;
      continue;
    }
    // Neither the spelling nor any part of it longer than the base name
    // ("b/k.ptx" of "a/b/k.ptx").
    for (size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
      const std::string tail = name.substr(slash + 1);
      if (tail != base && Shows(result, tail)) return false;
    }
    if (Shows(result, name)) return false;
  }
  return true;
}

}  // namespace jitcache
