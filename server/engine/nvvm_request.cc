#include "server/engine/nvvm_request.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/cache_key.h"
#include "common/option_parser.h"
#include "common/plain_status_absl.h"
#include "server/build/toolkit_library.h"

namespace jitcache {
namespace {

bool IsModule(const v1::NvvmCall& call) {
  return call.kind() == v1::NVVM_ADD_MODULE ||
         call.kind() == v1::NVVM_LAZY_ADD_MODULE;
}

// A module's call: its digest as the key holds it (raw), from the bytes
// when they came.
absl::StatusOr<Digest> ModuleDigest(const v1::NvvmCall& call, int index,
                                    bool with_modules) {
  absl::StatusOr<Digest> named = Digest::FromHex(call.digest());
  if (!named.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("module ", index, ": its digest is not one"));
  }
  if (!with_modules) {
    if (!call.module().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "module ", index, ": bytes in a request without modules"));
    }
    return named;
  }
  const Digest of_bytes = Digest::Of(call.module());
  if (!(of_bytes == *named)) {
    return absl::InvalidArgumentError(
        absl::StrCat("module ", index, ": the digest is not of its bytes"));
  }
  return of_bytes;
}

absl::Status CheckCall(const v1::NvvmCall& call, int index,
                       const RequestLimits& limits) {
  if (!v1::NvvmCallKind_IsValid(call.kind()) ||
      call.kind() == v1::NVVM_CALL_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("call ", index, " is of no kind"));
  }
  if (IsModule(call)) {
    if (!call.options().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("call ", index, ": a module has no options"));
    }
    if (call.unnamed() && !call.name().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("call ", index, ": unnamed, with a name"));
    }
    return ToAbsl(option_parser::CheckCString("a module's name", call.name()),
                  absl::StatusCode::kInvalidArgument);
  }
  if (!call.name().empty() || call.unnamed() || !call.digest().empty() ||
      !call.module().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("call ", index, ": a compile or verify names no module"));
  }
  if (absl::Status s =
          CheckCount("options", call.options_size(), limits.max_options);
      !s.ok()) {
    return s;
  }
  for (const std::string& option : call.options()) {
    if (absl::Status s =
            ToAbsl(option_parser::CheckCString("an option", option),
                   absl::StatusCode::kInvalidArgument);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PreparedNvvm> PrepareNvvm(const v1::NvvmRequest& request,
                                         const ToolchainInfo& toolchain,
                                         const RequestLimits& limits) {
  const std::optional<ToolchainInfo::Library>& libnvvm = toolchain.libnvvm;
  if (!libnvvm.has_value() || libnvvm->path != request.libnvvm().path() ||
      !(libnvvm->stamp == StampOfLibrary(request.libnvvm()))) {
    return absl::FailedPreconditionError(absl::StrCat(
        "libNVVM ", request.libnvvm().path(),
        " is not the one this daemon runs (jitcached --libnvvm names it)"));
  }
  if (absl::Status s =
          CheckCount("calls", request.calls_size(), limits.max_link_inputs);
      !s.ok()) {
    return s;
  }
  if (request.calls().empty() || IsModule(*request.calls().rbegin())) {
    return absl::InvalidArgumentError(
        "a libNVVM program's calls end with a compile or a verify");
  }
  PreparedNvvm out;
  std::vector<Digest> digests(request.calls_size());
  std::vector<NvvmKeyInput::Call> calls(request.calls_size());
  std::vector<std::vector<std::string>> options(request.calls_size());
  for (int i = 0; i < request.calls_size(); ++i) {
    const v1::NvvmCall& call = request.calls(i);
    if (absl::Status s = CheckCall(call, i, limits); !s.ok()) return s;
    NvvmKeyInput::Call& keyed = calls[i];
    keyed.kind = call.kind();
    if (IsModule(call)) {
      absl::StatusOr<Digest> digest =
          ModuleDigest(call, i, request.with_modules());
      if (!digest.ok()) return digest.status();
      digests[i] = *digest;
      keyed.name = call.name();
      keyed.unnamed = call.unnamed();
      keyed.module_digest = digests[i].AsBytes();
      out.module_bytes += call.module().size();
    } else {
      options[i] = {call.options().begin(), call.options().end()};
      keyed.options = options[i];
    }
  }
  if (absl::Status s =
          CheckSize("modules", out.module_bytes, limits.max_request_bytes);
      !s.ok()) {
    return s;
  }
  const v1::NvvmCall& last = *request.calls().rbegin();
  out.options = {last.options().begin(), last.options().end()};
  const bool lto = std::find(out.options.begin(), out.options.end(),
                             "-gen-lto") != out.options.end();
  out.target = lto ? ObjectKind::kLtoir : ObjectKind::kPtx;
  out.key = ComputeNvvmKey({libnvvm->sha256, calls});
  return out;
}

NvvmJob MakeNvvmJob(const v1::NvvmRequest& request) {
  NvvmJob job;
  job.calls = {request.calls().begin(), request.calls().end()};
  return job;
}

}  // namespace jitcache
