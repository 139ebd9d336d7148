#include "common/compile_options.h"

#include <algorithm>
#include <string_view>

#include "common/option_parser.h"
#include "common/plain_status.h"
#include "common/text.h"

namespace jitcache {
namespace {

using option_parser::Arg;
using option_parser::Check;
using option_parser::Group;
using option_parser::Spec;

// The real NVRTC keeps precompiled headers in its heap in the caller's
// process: a PCH file serves only the library instance that made it
// (another process's gives warning 20282), automatic ones live in a
// directory named after the process, and what a compile says ("creating",
// "using") and its PCH status depend on the process's earlier compiles.
// No answer from another process can be that.
constexpr std::string_view kPchRefusal =
    "precompiled headers live in the caller's process (its NVRTC heap and "
    "files), which a cached answer cannot reproduce";
constexpr std::string_view kDepfileRefusal =
    "it writes a dependency file, which a cached compile cannot reproduce";

// NVRTC's options, canonical name first.
constexpr Spec kNvrtcSpecs[] = {
    {"gpu-architecture", "arch", Arg::kValue, Check::kArch, Group::kSingle},
    {"device-c", "dc", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-w", "dw", Arg::kNone, Check::kAny, Group::kFlag},
    {"relocatable-device-code", "rdc", Arg::kValue, Check::kBool,
     Group::kSingle},
    {"extensible-whole-program", "ewp", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-debug", "G", Arg::kNone, Check::kAny, Group::kFlag},
    {"generate-line-info", "lineinfo", Arg::kNone, Check::kAny, Group::kFlag},
    {"dopt", "", Arg::kValue, Check::kOnOff, Group::kSingle},
    {"ptxas-options", "Xptxas", Arg::kValue, Check::kAny, Group::kOrdered},
    {"maxrregcount", "", Arg::kValue, Check::kCount, Group::kSingle},
    {"ftz", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"prec-sqrt", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"prec-div", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"fmad", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"use_fast_math", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"extra-device-vectorization", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"dlink-time-opt", "dlto", Arg::kNone, Check::kAny, Group::kFlag},
    {"gen-opt-lto", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"define-macro", "D", Arg::kValue, Check::kAny, Group::kOrdered},
    {"undefine-macro", "U", Arg::kValue, Check::kAny, Group::kOrdered},
    {"include-path", "I", Arg::kValue, Check::kAny, Group::kOrdered},
    {"pre-include", "include", Arg::kValue, Check::kAny, Group::kOrdered},
    {"no-source-include", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"std", "", Arg::kValue, Check::kStd, Group::kSingle},
    {"builtin-move-forward", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"builtin-initializer-list", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"disable-warnings", "w", Arg::kNone, Check::kAny, Group::kFlag},
    {"restrict", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-as-default-execution-space", "default-device", Arg::kNone,
     Check::kAny, Group::kFlag},
    {"device-int128", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"optimization-info", "opt-info", Arg::kValue, Check::kAny,
     Group::kOrdered},
    {"display-error-number", "err-no", Arg::kNone, Check::kAny, Group::kFlag},
    {"no-display-error-number", "no-err-no", Arg::kNone, Check::kAny,
     Group::kFlag},
    {"diag-error", "", Arg::kValue, Check::kAny, Group::kOrdered},
    {"diag-suppress", "", Arg::kValue, Check::kAny, Group::kOrdered},
    {"diag-warn", "", Arg::kValue, Check::kAny, Group::kOrdered},
    {"brief-diagnostics", "brief-diag", Arg::kValue, Check::kBool,
     Group::kSingle},
    {"split-compile", "", Arg::kValue, Check::kCount, Group::kSingle},
    {"fdevice-syntax-only", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"minimal", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-stack-protector", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"Ofast-compile", "Ofc", Arg::kValue, Check::kOfast, Group::kSingle},
    // Accepted by NVRTC 13 (its option probe): keyed as spelled, like the
    // rest, and shown exact by the differential corpus.
    {"frandom-seed", "", Arg::kValue, Check::kAny, Group::kSingle},
    {"fassociative-math", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"jump-table-density", "", Arg::kValue, Check::kAny, Group::kSingle},
    {"modify-stack-limit", "", Arg::kValue, Check::kBool, Group::kSingle},
    {"no-cache", "", Arg::kNone, Check::kAny, Group::kFlag},
    {"no-lineinfo-inlined-at", "", Arg::kNone, Check::kAny, Group::kFlag},
    // Taken from sm_100 on: NVRTC itself refuses it for older
    // architectures, and that refusal is what the caller gets.
    {"device-float128", "", Arg::kNone, Check::kAny, Group::kFlag},
    // OptiX IR instead of PTX, cubin or LTO-IR: target optixir.
    {"optix-ir", "", Arg::kNone, Check::kAny, Group::kFlag},
    // Refused: they write files or read files the key does not cover.
    {"time", "", Arg::kValue, Check::kAny, Group::kSingle,
     "it writes a timing file, which a cached compile cannot reproduce"},
    {"fdevice-time-trace", "", Arg::kValue, Check::kAny, Group::kSingle,
     "it writes a trace file, which a cached compile cannot reproduce"},
    {"pch", "", Arg::kNone, Check::kAny, Group::kFlag, kPchRefusal},
    {"create-pch", "", Arg::kValue, Check::kAny, Group::kSingle, kPchRefusal},
    {"use-pch", "", Arg::kValue, Check::kAny, Group::kSingle, kPchRefusal},
    {"pch-dir", "", Arg::kValue, Check::kAny, Group::kSingle, kPchRefusal},
    // Alone they tune nothing: no PCH is made or used, and the real NVRTC
    // gives the plain compile's answer (its PCH queries: none attempted).
    // With one of the options above, that option hands the compile back.
    {"pch-verbose", "", Arg::kValue, Check::kAny, Group::kSingle},
    {"pch-messages", "", Arg::kValue, Check::kAny, Group::kSingle},
    {"instantiate-templates-in-pch", "", Arg::kValue, Check::kAny,
     Group::kSingle},
    {"dependency-output", "MF", Arg::kValue, Check::kAny, Group::kSingle,
     kDepfileRefusal},
    {"generate-dependencies-with-compile", "MD", Arg::kNone, Check::kAny,
     Group::kFlag, kDepfileRefusal},
    {"generate-nonsystem-dependencies-with-compile", "MMD", Arg::kNone,
     Check::kAny, Group::kFlag, kDepfileRefusal},
};

constexpr std::string_view kNvrtcGlued[] = {"D", "U", "I"};

constexpr option_parser::Dialect kNvrtc = {"NVRTC", kNvrtcSpecs, kNvrtcGlued,
                                           "--", "gpu-architecture"};

}  // namespace

PlainStatusOr<CanonicalOptions> CanonicalizeCompileOptions(
    std::span<const std::string> raw, ObjectKind target,
    const OptionPolicy& policy) {
  PlainStatusOr<option_parser::Parsed> parsed =
      option_parser::Parse(raw, kNvrtc, policy);
  if (!parsed.ok()) return parsed.status();
  CanonicalOptions out;
  out.arch = parsed->single("gpu-architecture");
  switch (target) {
    case ObjectKind::kCubin:
      if (!text::StartsWith(out.arch, "sm_")) {
        return PlainStatus::Error(
            "target cubin needs a real architecture: add -arch=sm_XX");
      }
      break;
    case ObjectKind::kPtx:
    case ObjectKind::kLtoir:
    case ObjectKind::kOptixIr:
      break;
    default:
      return PlainStatus::Error(
          "NVRTC compiles to ptx, cubin, ltoir or optixir only");
  }
  // NVRTC reads the options itself, exactly as given: two spellings are two
  // keys, and a spelling NVRTC refuses is refused by NVRTC.
  out.options.assign(raw.begin(), raw.end());
  return out;
}

bool AsksForLtoIr(std::span<const std::string> options) {
  return std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o == "-dlto" || o == "--dlink-time-opt";
  });
}

bool AsksForOptixIr(std::span<const std::string> options) {
  return std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o == "-optix-ir" || o == "--optix-ir";
  });
}

PlainStatusOr<std::vector<std::string>> OrderedCompileOptions(
    std::span<const std::string> raw) {
  PlainStatusOr<option_parser::Parsed> parsed =
      option_parser::Parse(raw, kNvrtc, OptionPolicy());
  if (!parsed.ok()) return parsed.status();
  return std::move(parsed->ordered);
}

}  // namespace jitcache
