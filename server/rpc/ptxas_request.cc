#include "server/rpc/ptxas_request.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cache_key.h"
#include "common/option_parser.h"
#include "common/ptx_sources.h"
#include "common/ptxas_command.h"
#include "server/build/toolkit_library.h"

namespace jitcache {
namespace {

// The path the caller's ptxas opens for `spelled`, run in `cwd`; error
// for one with ".." in it, which the kernel resolves through the caller's
// symbolic links, not lexically as the view would.
absl::StatusOr<std::string> PathInView(const std::string& cwd,
                                       const std::string& spelled) {
  const std::filesystem::path path(spelled);
  for (const std::filesystem::path& part : path) {
    if (part == "..") {
      return absl::FailedPreconditionError(
          absl::StrCat("for the real ptxas: the path ", spelled, " has .."));
    }
  }
  return (std::filesystem::path(cwd) / path).lexically_normal().string();
}

}  // namespace

absl::StatusOr<PreparedPtxas> PreparePtxas(const v1::PtxasRequest& request,
                                           const ToolchainInfo& toolchain,
                                           const RequestLimits& limits) {
  const ToolchainInfo::Library* ptxas = nullptr;
  for (const ToolchainInfo::Library& known : toolchain.ptxas) {
    if (known.path == request.ptxas().path() &&
        known.stamp == StampOfLibrary(request.ptxas())) {
      ptxas = &known;
    }
  }
  if (ptxas == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ptxas ", request.ptxas().path(),
        " is not one this daemon runs (jitcached --ptxas registers one)"));
  }
  for (absl::Status s :
       {CheckSize("ptx", request.ptx().size(), limits.max_source_bytes),
        CheckCount("arguments", request.arguments_size(), limits.max_options),
        option_parser::CheckCString("the program name", request.program()),
        option_parser::CheckCString("the working directory",
                                    request.working_directory())}) {
    if (!s.ok()) return s;
  }
  const std::filesystem::path cwd(request.working_directory());
  if (!cwd.is_absolute() || cwd.lexically_normal() != cwd) {
    return absl::InvalidArgumentError(
        "the working directory must be absolute and normal");
  }
  absl::StatusOr<PtxasCommand> command = ParsePtxasCommand(
      {request.arguments().begin(), request.arguments().end()});
  if (!command.ok()) return command.status();

  PreparedPtxas out;
  PtxasJob& job = out.job;
  job.ptxas = *ptxas;
  job.program = request.program();
  job.ptx = request.ptx();
  job.working_directory = request.working_directory();
  const std::string output = command->output_path();
  absl::StatusOr<std::string> input_path =
      PathInView(job.working_directory, command->input_path());
  if (!input_path.ok()) return input_path.status();
  absl::StatusOr<std::string> output_path =
      PathInView(job.working_directory, output);
  if (!output_path.ok()) return output_path.status();
  job.input_path = *input_path;
  job.output_path = *output_path;

  // The request says what the caller's stat said of each source the PTX
  // names, and of nothing else.
  absl::StatusOr<std::vector<std::string>> sources = PtxSourceFiles(job.ptx);
  if (!sources.ok()) return sources.status();
  if (static_cast<size_t>(request.sources_size()) != sources->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the PTX names ", sources->size(),
                     " sources, the request ", request.sources_size()));
  }
  std::vector<PtxasKeyInput::Source> keyed;
  for (int i = 0; i < request.sources_size(); ++i) {
    const v1::PtxasSource& source = request.sources(i);
    if (source.path() != (*sources)[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("source ", i, " is not the one the PTX names"));
    }
    absl::StatusOr<std::string> path =
        PathInView(job.working_directory, source.path());
    if (!path.ok()) return path.status();
    job.sources.push_back(
        {*path, source.exists(), source.size(), source.mtime_ns()});
    keyed.push_back(
        {source.path(), source.exists(), source.size(), source.mtime_ns()});
  }

  const std::vector<std::string> without_names = command->WithoutNames();
  PtxasKeyInput key{ptxas->sha256, job.program,  without_names,
                    job.ptx,       std::nullopt, keyed};
  const PtxasKeyInput::Names names{command->input_path(), output};
  if (request.with_names()) {
    key.names = names;
    out.key = ComputePtxasKey(key);
  } else {
    out.key = ComputePtxasKey(key);
    key.names = names;
    out.named_key = ComputePtxasKey(key);
  }
  // Each file name as spelled and its last part: what ptxas prints in its
  // messages and embeds with -g. Not the directories: nothing ptxas
  // writes was found to hold one without the file's name (the
  // differential test's runs in other directories say so), while the PTX
  // itself often names files there (Triton's line information: the
  // kernel's Python source, Inductor's cache directory).
  for (const std::string& name : {command->input_path(), output}) {
    for (const std::string& shown :
         {name, std::filesystem::path(name).filename().string()}) {
      if (!shown.empty()) out.names.push_back(shown);
    }
  }
  job.arguments = std::move(command->arguments);
  return out;
}

bool AnswerShowsNames(const CompileResult& result,
                      const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (absl::StrContains(result.log, name) ||
        absl::StrContains(result.object, name) ||
        (result.ptxas_run.has_value() &&
         absl::StrContains(result.ptxas_run->stdout(), name))) {
      return true;
    }
  }
  return false;
}

}  // namespace jitcache
