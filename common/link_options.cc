#include "common/link_options.h"

#include <string_view>

#include "absl/status/status.h"
#include "common/plain_status_absl.h"
#include "common/text.h"

namespace jitcache {
namespace {

using option_parser::Arg;
using option_parser::Check;
using option_parser::Group;
using option_parser::Spec;

constexpr Spec kNvJitLinkSpecs[] = {
    {"arch", "", Arg::kValue, Check::kArch, Group::kSingle},
    {"maxrregcount", "", Arg::kValue, Check::kCount, Group::kSingle},
    {"verbose", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"lto", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"ptx", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"O",
     "",
     Arg::kValue,
     Check::kOptLevel,
     Group::kSingle,
     {},
     /*glued=*/true},
    {"g", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"lineinfo", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"ftz", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"prec-div", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"prec-sqrt", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"fma", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"kernels-used", "", Arg::kValue, Check::kAny, Group::kSet},
    {"variables-used", "", Arg::kValue, Check::kAny, Group::kSet},
    {"optimize-unused-variables", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"Xptxas", "", Arg::kValue, Check::kAny, Group::kOrdered},
    {"split-compile", "", Arg::kValue, Check::kCount, Group::kSingle},
    {"split-compile-extended", "", Arg::kValue, Check::kCount, Group::kSingle},
    {"jump-table-density", "", Arg::kValue, Check::kCount, Group::kSingle},
    {"no-cache", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"time", "", Arg::kNone, Check::kAny, Group::kFlag,
     "its timing output differs on every run and would be cached in the log"},
};

constexpr std::string_view kNvJitLinkGlued[] = {"O"};

constexpr option_parser::Dialect kNvJitLink = {"nvJitLink", kNvJitLinkSpecs,
                                               kNvJitLinkGlued, "-", "arch"};

}  // namespace

bool LinkOptionsReportTimes(std::span<const std::string> options) {
  for (const std::string& o : options) {
    if (o == "-verbose" ||
        (text::StartsWith(o, "-Xptxas") && text::Contains(o, "-v"))) {
      return true;
    }
    for (const Spec& spec : kNvJitLinkSpecs) {
      const std::string name = text::Cat("-", spec.name);
      if (!spec.refusal.empty() &&
          (o == name || text::StartsWith(o, name + "="))) {
        return true;
      }
    }
  }
  return false;
}

bool LinkOptionsReadFiles(std::span<const std::string> options) {
  for (const std::string& o : options) {
    if (text::StartsWith(o, "-Xptxas") &&
        (text::Contains(o, "options-file") || text::Contains(o, "optf"))) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<CanonicalLinkOptions> CanonicalizeLinkOptions(
    std::span<const std::string> raw, ObjectKind target, bool ltoir_inputs,
    const OptionPolicy& policy) {
  absl::StatusOr<option_parser::Parsed> parsed =
      ToAbsl(option_parser::Parse(raw, kNvJitLink, policy),
             absl::StatusCode::kInvalidArgument);
  if (!parsed.ok()) return parsed.status();
  CanonicalLinkOptions out;
  out.arch = parsed->single("arch");
  if (!text::StartsWith(out.arch, "sm_")) {
    return absl::InvalidArgumentError(
        "a link needs a real architecture: add -arch=sm_XX");
  }
  if (ltoir_inputs) parsed->flags.insert("lto");
  switch (target) {
    case ObjectKind::kPtx:
      parsed->flags.insert("ptx");
      break;
    case ObjectKind::kCubin:
      if (parsed->has_flag("ptx")) {
        return absl::InvalidArgumentError(
            "option '-ptx' makes PTX: ask for target ptx");
      }
      break;
    default:
      return absl::InvalidArgumentError("a link produces cubin or ptx only");
  }
  out.options = option_parser::Render(*parsed, kNvJitLink);
  return out;
}

}  // namespace jitcache
