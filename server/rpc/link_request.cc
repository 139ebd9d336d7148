#include "server/rpc/link_request.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/cache_key.h"
#include "common/link_options.h"
#include "jitcache/v1/wire_kinds.h"

namespace jitcache {

absl::StatusOr<PreparedLink> PrepareLink(const v1::LinkRequest& request,
                                         const ToolchainInfo& toolchain,
                                         const RequestLimits& limits) {
  if (request.inputs().empty()) {
    return absl::InvalidArgumentError("a link needs at least one input");
  }
  for (absl::Status s :
       {CheckCount("link inputs", request.inputs_size(),
                   limits.max_link_inputs),
        CheckCount("options", request.options_size(), limits.max_options)}) {
    if (!s.ok()) return s;
  }
  PreparedLink out;
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
    if (!kind) {
      return absl::InvalidArgumentError(
          absl::StrCat("link ", label, " has no valid kind"));
    }
    PreparedLink::Input input{Digest{}, *kind, label};
    switch (in.source_case()) {
      case v1::LinkInput::kDigest: {
        absl::StatusOr<Digest> digest = Digest::FromHex(in.digest());
        if (!digest.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("link ", label, ": ", digest.status().message()));
        }
        input.digest = *digest;
        break;
      }
      case v1::LinkInput::kData:
        if (in.data().empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat("link ", label, " is empty"));
        }
        input.digest = Digest::Of(in.data());
        out.inline_objects.push_back({input.digest, *kind, in.data()});
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("link ", label, " has neither a digest nor data"));
    }
    key.inputs.emplace_back(*kind, input.digest);
    out.inputs.push_back(std::move(input));
  }
  out.key = ComputeLinkKey(key);
  return out;
}

}  // namespace jitcache
