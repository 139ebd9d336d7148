#include "server/rpc/compile_request.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/cache_key.h"
#include "common/compile_options.h"
#include "server/rpc/wire_target.h"

namespace jitcache {
absl::StatusOr<PreparedCompile> PrepareCompile(
    const v1::CompileRequest& request, const ToolchainInfo& toolchain,
    const RequestLimits& limits) {
  if (request.source().empty()) {
    return absl::InvalidArgumentError("source is empty");
  }
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
  const std::optional<ObjectKind> target = FromWireTarget(request.target());
  if (!target) {
    return absl::InvalidArgumentError("target must be PTX, CUBIN or LTOIR");
  }

  PreparedCompile out;
  out.target = *target;
  out.program_name =
      request.program_name().empty() ? "program.cu" : request.program_name();
  if (out.program_name.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("program_name contains a NUL byte");
  }
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

  const std::vector<std::string> raw_options(request.options().begin(),
                                             request.options().end());
  OptionPolicy policy{toolchain.supported_archs, toolchain.include_dirs};
  absl::StatusOr<CanonicalOptions> options =
      CanonicalizeCompileOptions(raw_options, *target, policy);
  if (!options.ok()) return options.status();

  out.options = std::move(options->options);
  out.arch = options->arch;
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

  CompileKeyInput key;
  key.toolchain_fingerprint = toolchain.fingerprint;
  key.target = *target;
  key.arch = options->arch;
  key.options = out.options;
  key.program_name = out.program_name;
  key.source = request.source();
  for (const v1::Header& header : request.headers()) {
    key.headers.emplace_back(header.name(), header.contents());
  }
  for (const std::string& e : out.name_expressions)
    key.name_expressions.push_back(e);
  out.key = ComputeCompileKey(key);
  return out;
}

CompileJob MakeCompileJob(const v1::CompileRequest& request,
                          const PreparedCompile& prepared) {
  CompileJob job;
  job.program_name = prepared.program_name;
  job.source = request.source();
  for (const v1::Header& header : request.headers()) {
    job.headers.emplace_back(header.name(), header.contents());
  }
  job.options = prepared.options;
  job.name_expressions = prepared.name_expressions;
  job.target = prepared.target;
  return job;
}

}  // namespace jitcache
