#include "server/engine/link_request.h"

#include <algorithm>
#include <span>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cache_key.h"
#include "common/link_options.h"
#include "common/paths.h"
#include "common/plain_status_absl.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {
namespace {

// A link input's kind: one nvJitLink takes.
absl::Status CheckLinkInputKind(const std::optional<ObjectKind>& kind,
                                const std::string& label) {
  if (!kind) {
    return absl::InvalidArgumentError(
        absl::StrCat("link ", label, " has no valid kind"));
  }
  if (!IsLinkInput(*kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("link ", label, " is ", ObjectKindName(*kind),
                     ", which nvJitLink does not take (no valid kind)"));
  }
  return absl::OkStatus();
}

// Where the input's bytes come from: the digest named, or inline data
// (kept like an upload).
absl::Status ReadSource(const v1::LinkInput& in, ObjectKind kind,
                        const std::string& label, PreparedLink* out,
                        Digest* digest) {
  switch (in.source_case()) {
    case v1::LinkInput::kDigest: {
      absl::StatusOr<Digest> d = Digest::FromHex(in.digest());
      if (!d.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("link ", label, ": ", d.status().message()));
      }
      *digest = *d;
      return absl::OkStatus();
    }
    case v1::LinkInput::kData:
      if (in.data().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("link ", label, " is empty"));
      }
      *digest = Digest::Of(in.data());
      out->inline_objects.push_back({*digest, kind, in.data()});
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("link ", label, " has neither a digest nor data"));
  }
}

// What the caller's stat said of the source files a PTX input names: each
// path absolute and lexically normal (nvJitLink stats it as the PTX spells
// it; anything else is the caller's to link), and no path twice with two
// answers.
absl::Status ReadSourceStats(const v1::LinkInput& in, const std::string& label,
                             std::vector<SourceStat>* out) {
  constexpr int kMaxSources = 4096;
  if (in.sources_size() > kMaxSources) {
    return absl::InvalidArgumentError(absl::StrCat(
        "link ", label, " names more than ", kMaxSources, " source files"));
  }
  for (const v1::PtxasSource& s : in.sources()) {
    if (!IsNormalAbsolutePath(s.path())) {
      return absl::FailedPreconditionError(
          absl::StrCat("link ", label, " names source file '", s.path(),
                       "', not absolute and normal: the caller links it"));
    }
    out->push_back({s.path(), s.exists(), s.size(), s.mtime_ns()});
  }
  return absl::OkStatus();
}

// As the caller drove nvJitLink: nothing is canonicalized, since the real
// nvJitLink answers each spelling in its own way (a refusal included).
absl::StatusOr<PreparedLink> PrepareAsCalledLink(
    const v1::LinkRequest& request, const ToolchainInfo& toolchain) {
  PreparedLink out;
  out.as_called = true;
  out.steps_only = request.steps_only();
  out.target = ObjectKind::kCubin;
  for (int i = 0; i < request.options_size(); ++i) {
    const std::string& option = request.options(i);
    if (absl::Status s = ToAbsl(
            option_parser::CheckCString(absl::StrCat("option ", i + 1), option),
            absl::StatusCode::kInvalidArgument);
        !s.ok()) {
      return s;
    }
    if (absl::StartsWith(option, "-arch=")) out.arch = option.substr(6);
    out.options.push_back(option);
  }
  if (LinkOptionsReadFiles(out.options)) {
    // The file is the caller's; a record would answer with another's.
    return absl::FailedPreconditionError(
        "options that read a file (-Xptxas --options-file) are linked by the "
        "caller's own nvJitLink");
  }
  if (LinkOptionsReportTimes(out.options)) {
    // A record would answer with another run's timings.
    return absl::FailedPreconditionError(
        "options whose output tells the moment (-time, -verbose, -Xptxas -v) "
        "are linked by the caller's own nvJitLink");
  }
  std::vector<AsCalledLinkKeyInput::Input> keyed;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const v1::LinkInput& in = request.inputs(i);
    const std::string label = absl::StrCat("input ", i);
    std::optional<ObjectKind> kind = FromWireKind(in.kind());
    if (absl::Status s = CheckLinkInputKind(kind, label); !s.ok()) return s;
    if (absl::Status s =
            ToAbsl(option_parser::CheckCString(label + "'s name", in.name()),
                   absl::StatusCode::kInvalidArgument);
        !s.ok()) {
      return s;
    }
    PreparedLink::Input input{
        Digest{}, *kind, in.name(), in.typed_by_content(), {}};
    if (absl::Status s = ReadSource(in, *kind, label, &out, &input.digest);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ReadSourceStats(in, label, &input.sources); !s.ok()) {
      return s;
    }
    out.inputs.push_back(std::move(input));
  }
  // (The views the key holds live in `out` and `stat_keys`.)
  std::vector<std::vector<SourceStatKey>> stat_keys;
  for (const PreparedLink::Input& input : out.inputs) {
    std::vector<SourceStatKey>& stats = stat_keys.emplace_back();
    for (const SourceStat& s : input.sources) {
      stats.push_back({s.path, s.exists, s.size, s.mtime_ns});
    }
  }
  for (size_t i = 0; i < out.inputs.size(); ++i) {
    const PreparedLink::Input& input = out.inputs[i];
    keyed.push_back({input.kind, input.digest, input.name,
                     input.typed_by_content, stat_keys[i]});
  }
  auto key_of = [&](size_t inputs, bool complete, bool names_keyed) {
    return ComputeAsCalledLinkKey(
        {.toolchain_fingerprint = toolchain.fingerprint,
         .options = out.options,
         .inputs = std::span(keyed).first(inputs),
         .complete = complete,
         .names_keyed = names_keyed});
  };
  out.key = key_of(keyed.size(), !out.steps_only, false);
  out.named_key = key_of(keyed.size(), !out.steps_only, true);
  if (!out.steps_only) {
    for (size_t k = 0; k <= keyed.size(); ++k) {
      out.step_keys.push_back(key_of(k, false, false));
      out.named_step_keys.push_back(key_of(k, false, true));
    }
  }
  return out;
}

}  // namespace

PreparedLink RenamedElsewhere(const PreparedLink& link) {
  PreparedLink out = link;
  for (size_t i = 0; i < out.inputs.size(); ++i) {
    std::string& name = out.inputs[i].name;
    const size_t slash = name.rfind('/');
    const size_t dot = name.rfind('.');
    const std::string extension =
        dot != std::string::npos && (slash == std::string::npos || dot > slash)
            ? name.substr(dot)
            : "";
    // A stem longer than the name's, in a directory it did not have, and
    // another length in all: no part of it lines up with the caller's.
    // (The extension stays: the key without names holds it.)
    const size_t stem = name.size() - extension.size() -
                        (slash == std::string::npos ? 0 : slash + 1);
    const std::string directory =
        absl::StrCat("/.jitcache-elsewhere/input", i, "/");
    size_t length = stem + 3;
    if (directory.size() + length + extension.size() == name.size()) {
      ++length;
    }
    name = absl::StrCat(directory, std::string(length, 'q'), extension);
  }
  return out;
}

absl::StatusOr<PreparedLink> PrepareLink(const v1::LinkRequest& request,
                                         const ToolchainInfo& toolchain,
                                         const RequestLimits& limits) {
  for (absl::Status s :
       {CheckCount("link inputs", request.inputs_size(),
                   limits.max_link_inputs),
        CheckCount("options", request.options_size(), limits.max_options)}) {
    if (!s.ok()) return s;
  }
  PreparedLink out;
  if (request.as_called()) return PrepareAsCalledLink(request, toolchain);
  if (request.inputs().empty()) {
    return absl::InvalidArgumentError("a link needs at least one input");
  }
  if (request.steps_only()) {
    return absl::InvalidArgumentError("steps_only needs as_called");
  }
  std::optional<ObjectKind> target = FromWireTarget(request.target());
  if (!target ||
      (*target != ObjectKind::kCubin && *target != ObjectKind::kPtx)) {
    return absl::InvalidArgumentError("a link's target must be CUBIN or PTX");
  }
  out.target = *target;
  const std::vector<std::string> raw(request.options().begin(),
                                     request.options().end());
  const bool ltoir_inputs =
      std::any_of(request.inputs().begin(), request.inputs().end(),
                  [](const v1::LinkInput& in) {
                    return in.kind() == v1::OBJECT_KIND_LTOIR;
                  });
  absl::StatusOr<CanonicalLinkOptions> options = CanonicalizeLinkOptions(
      raw, *target, ltoir_inputs, OptionPolicy{toolchain.supported_archs});
  if (!options.ok()) return options.status();
  out.options = std::move(options->options);
  out.arch = options->arch;

  LinkKeyInput key;
  key.toolchain_fingerprint = toolchain.fingerprint;
  key.target = *target;
  key.options = out.options;
  for (int i = 0; i < request.inputs_size(); ++i) {
    const v1::LinkInput& in = request.inputs(i);
    const std::string label =
        in.name().empty() ? absl::StrCat("input ", i) : in.name();
    std::optional<ObjectKind> kind = FromWireKind(in.kind());
    if (absl::Status s = CheckLinkInputKind(kind, label); !s.ok()) return s;
    PreparedLink::Input input{Digest{}, *kind, label, false, {}};
    if (absl::Status s = ReadSource(in, *kind, label, &out, &input.digest);
        !s.ok()) {
      return s;
    }
    key.inputs.emplace_back(*kind, input.digest);
    out.inputs.push_back(std::move(input));
  }
  out.key = ComputeLinkKey(key);
  return out;
}

std::vector<NeededInput> NeededInputsOf(const PreparedLink& link) {
  std::vector<NeededInput> needed;
  for (const PreparedLink::Input& input : link.inputs) {
    const bool sent =
        std::any_of(link.inline_objects.begin(), link.inline_objects.end(),
                    [&](const PreparedLink::Inline& o) {
                      return o.digest == input.digest;
                    });
    needed.push_back({input.digest, input.name, sent});
  }
  return needed;
}

}  // namespace jitcache
