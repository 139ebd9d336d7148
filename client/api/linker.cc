#include "jitcache/linker.h"

#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/digest.h"

namespace jitcache {
namespace {
std::string Bool(bool b) { return b ? "true" : "false"; }
}  // namespace

std::vector<std::string> LinkerOptions::AsNvJitLinkOptions() const {
  std::vector<std::string> out;
  if (!arch.empty()) out.push_back(absl::StrCat("-arch=", arch));
  if (link_time_optimization) out.push_back("-lto");
  if (optimization_level) {
    out.push_back(absl::StrCat("-O", *optimization_level));
  }
  if (max_register_count) {
    out.push_back(absl::StrCat("-maxrregcount=", *max_register_count));
  }
  if (debug) out.push_back("-g");
  if (lineinfo) out.push_back("-lineinfo");
  if (ftz) out.push_back(absl::StrCat("-ftz=", Bool(*ftz)));
  if (prec_div) out.push_back(absl::StrCat("-prec-div=", Bool(*prec_div)));
  if (prec_sqrt) out.push_back(absl::StrCat("-prec-sqrt=", Bool(*prec_sqrt)));
  if (fma) out.push_back(absl::StrCat("-fma=", Bool(*fma)));
  for (const auto& k : kernels_used) out.push_back("-kernels-used=" + k);
  for (const auto& v : variables_used) out.push_back("-variables-used=" + v);
  if (optimize_unused_variables) out.push_back("-optimize-unused-variables");
  for (const auto& x : ptxas_options) out.push_back("-Xptxas=" + x);
  if (split_compile) {
    out.push_back(absl::StrCat("-split-compile=", *split_compile));
  }
  out.insert(out.end(), extra_options.begin(), extra_options.end());
  return out;
}

Linker& Linker::Add(const ObjectCode& code) {
  inputs_.push_back(
      {code.code_type, code.name, code.object_digest, code.bytes.str()});
  return *this;
}

Linker& Linker::Add(std::string bytes, CodeType kind, std::string name) {
  inputs_.push_back({kind, std::move(name), "", std::move(bytes)});
  return *this;
}

absl::Status Linker::AddFile(const std::string& path,
                             std::optional<CodeType> kind) {
  if (!kind) kind = CodeTypeForFile(path);
  if (!kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot tell the kind of ", path,
        " from its extension (.ltoir, .ptx, .cubin, .fatbin, .o, .a)"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  Add(std::move(bytes), *kind, path.substr(path.find_last_of('/') + 1));
  return absl::OkStatus();
}

absl::StatusOr<ObjectCode> Linker::Link(const LinkerOptions& options,
                                        CodeType target) const {
  // Every input named by digest; when the daemon lacks one (NOT_FOUND,
  // CacheEngine::FindMissingInputs), the same link with the inputs' bytes.
  std::vector<Client::LinkInput> by_digest = inputs_;
  for (Client::LinkInput& input : by_digest) {
    if (input.digest.empty()) input.digest = Digest::Of(input.bytes).Hex();
    input.bytes.clear();
  }
  const std::vector<std::string> nvjitlink_options =
      options.AsNvJitLinkOptions();
  absl::StatusOr<ObjectCode> linked =
      client_->Link(by_digest, nvjitlink_options, target);
  if (!absl::IsNotFound(linked.status())) return linked;
  std::vector<Client::LinkInput> with_bytes = inputs_;
  for (Client::LinkInput& input : with_bytes) input.digest.clear();
  return client_->Link(with_bytes, nvjitlink_options, target);
}

}  // namespace jitcache
