#include "common/compile_options.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace jitcache {
namespace {

enum class Arg { kNone, kValue };
enum class Check {
  kAny,
  kBool,
  kOnOff,
  kCount,
  kStd,
  kArch,
  kOfast,
  kIncludeDir
};
// kSingle: one value, the last wins, position free. kFlag: present or not.
// kOrdered: repeatable and position matters.
enum class Group { kSingle, kFlag, kOrdered };

struct Spec {
  absl::string_view long_name;
  absl::string_view short_name;
  Arg arg;
  Check check;
  Group group;
  absl::string_view refusal = {};  // non-empty: refused, and why
};

constexpr absl::string_view kPchRefusal =
    "precompiled headers live in files outside the cache key";
constexpr absl::string_view kDepfileRefusal =
    "it writes a dependency file, which a cached compile cannot reproduce";

constexpr Spec kSpecs[] = {
    {"gpu-architecture", "arch", Arg::kValue, Check::kArch, Group::kSingle},
    {"device-c", "dc", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-w", "dw", Arg::kNone, Check::kAny, Group::kFlag},
    {"relocatable-device-code", "rdc", Arg::kValue, Check::kBool,
     Group::kSingle},
    {"extensible-whole-program", "ewp", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-debug", "G", Arg::kNone, Check::kAny, Group::kFlag},
    {"generate-line-info", "lineinfo", Arg::kNone, Check::kAny, Group::kFlag},
    {"dopt", "dopt", Arg::kValue, Check::kOnOff, Group::kSingle},
    {"ptxas-options", "Xptxas", Arg::kValue, Check::kAny, Group::kOrdered},
    {"maxrregcount", "maxrregcount", Arg::kValue, Check::kCount,
     Group::kSingle},
    {"ftz", "ftz", Arg::kValue, Check::kBool, Group::kSingle},
    {"prec-sqrt", "prec-sqrt", Arg::kValue, Check::kBool, Group::kSingle},
    {"prec-div", "prec-div", Arg::kValue, Check::kBool, Group::kSingle},
    {"fmad", "fmad", Arg::kValue, Check::kBool, Group::kSingle},
    {"use_fast_math", "use_fast_math", Arg::kNone, Check::kAny, Group::kFlag},
    {"extra-device-vectorization", "extra-device-vectorization", Arg::kNone,
     Check::kAny, Group::kFlag},
    {"dlink-time-opt", "dlto", Arg::kNone, Check::kAny, Group::kFlag},
    {"gen-opt-lto", "gen-opt-lto", Arg::kNone, Check::kAny, Group::kFlag},
    {"define-macro", "D", Arg::kValue, Check::kAny, Group::kOrdered},
    {"undefine-macro", "U", Arg::kValue, Check::kAny, Group::kOrdered},
    {"include-path", "I", Arg::kValue, Check::kIncludeDir, Group::kOrdered},
    {"pre-include", "include", Arg::kValue, Check::kAny, Group::kOrdered},
    {"no-source-include", "no-source-include", Arg::kNone, Check::kAny,
     Group::kFlag},
    {"std", "std", Arg::kValue, Check::kStd, Group::kSingle},
    {"builtin-move-forward", "builtin-move-forward", Arg::kValue, Check::kBool,
     Group::kSingle},
    {"builtin-initializer-list", "builtin-initializer-list", Arg::kValue,
     Check::kBool, Group::kSingle},
    {"disable-warnings", "w", Arg::kNone, Check::kAny, Group::kFlag},
    {"restrict", "restrict", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-as-default-execution-space", "default-device", Arg::kNone,
     Check::kAny, Group::kFlag},
    {"device-int128", "device-int128", Arg::kNone, Check::kAny, Group::kFlag},
    {"optimization-info", "opt-info", Arg::kValue, Check::kAny,
     Group::kOrdered},
    {"display-error-number", "err-no", Arg::kNone, Check::kAny, Group::kFlag},
    {"no-display-error-number", "no-err-no", Arg::kNone, Check::kAny,
     Group::kFlag},
    {"diag-error", "diag-error", Arg::kValue, Check::kAny, Group::kOrdered},
    {"diag-suppress", "diag-suppress", Arg::kValue, Check::kAny,
     Group::kOrdered},
    {"diag-warn", "diag-warn", Arg::kValue, Check::kAny, Group::kOrdered},
    {"brief-diagnostics", "brief-diag", Arg::kValue, Check::kBool,
     Group::kSingle},
    {"split-compile", "split-compile", Arg::kValue, Check::kCount,
     Group::kSingle},
    {"fdevice-syntax-only", "fdevice-syntax-only", Arg::kNone, Check::kAny,
     Group::kFlag},
    {"minimal", "minimal", Arg::kNone, Check::kAny, Group::kFlag},
    {"device-stack-protector", "device-stack-protector", Arg::kValue,
     Check::kBool, Group::kSingle},
    {"Ofast-compile", "Ofast-compile", Arg::kValue, Check::kOfast,
     Group::kSingle},
    // Refused: they write files or read files the key does not cover.
    {"time", "time", Arg::kValue, Check::kAny, Group::kSingle,
     "it writes a timing file, which a cached compile cannot reproduce"},
    {"fdevice-time-trace", "fdevice-time-trace", Arg::kValue, Check::kAny,
     Group::kSingle,
     "it writes a trace file, which a cached compile cannot reproduce"},
    {"pch", "pch", Arg::kNone, Check::kAny, Group::kFlag, kPchRefusal},
    {"create-pch", "create-pch", Arg::kValue, Check::kAny, Group::kSingle,
     kPchRefusal},
    {"use-pch", "use-pch", Arg::kValue, Check::kAny, Group::kSingle,
     kPchRefusal},
    {"pch-dir", "pch-dir", Arg::kValue, Check::kAny, Group::kSingle,
     kPchRefusal},
    {"pch-verbose", "pch-verbose", Arg::kValue, Check::kAny, Group::kSingle,
     kPchRefusal},
    {"pch-messages", "pch-messages", Arg::kValue, Check::kAny, Group::kSingle,
     kPchRefusal},
    {"instantiate-templates-in-pch", "instantiate-templates-in-pch",
     Arg::kValue, Check::kAny, Group::kSingle, kPchRefusal},
    {"dependency-output", "MF", Arg::kValue, Check::kAny, Group::kSingle,
     kDepfileRefusal},
    {"generate-dependencies-with-compile", "MD", Arg::kNone, Check::kAny,
     Group::kFlag, kDepfileRefusal},
    {"generate-nonsystem-dependencies-with-compile", "MMD", Arg::kNone,
     Check::kAny, Group::kFlag, kDepfileRefusal},
};

// Short options that also take their value glued on: -DNAME, -UNAME, -Idir.
constexpr absl::string_view kAttachedShort[] = {"D", "U", "I"};

const Spec* FindSpec(absl::string_view name) {
  for (const Spec& spec : kSpecs) {
    if (name == spec.long_name || name == spec.short_name) return &spec;
  }
  return nullptr;
}

absl::Status Invalid(absl::string_view option, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("option '", option, "': ", why));
}

struct Arch {
  bool real = false;  // sm_ (machine code) rather than compute_ (virtual)
  int number = 0;
  std::string canonical;
};

std::optional<Arch> ParseArch(absl::string_view value) {
  Arch arch;
  absl::string_view rest;
  if (absl::StartsWith(value, "sm_")) {
    arch.real = true;
    rest = value.substr(3);
  } else if (absl::StartsWith(value, "compute_")) {
    rest = value.substr(8);
  } else {
    return std::nullopt;
  }
  absl::string_view suffix;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    suffix = rest.substr(rest.size() - 1);
    rest.remove_suffix(1);
  }
  if (rest.empty() || rest.size() > 4 ||
      !std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(rest, &arch.number)) {
    return std::nullopt;
  }
  arch.canonical =
      absl::StrCat(arch.real ? "sm_" : "compute_", arch.number, suffix);
  return arch;
}

bool UnderDirectory(const std::filesystem::path& path,
                    const std::filesystem::path& dir) {
  auto [dir_end, path_it] =
      std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return dir_end == dir.end();
}

// Checks a value and returns its canonical spelling.
absl::StatusOr<std::string> CheckValue(const Spec& spec,
                                       absl::string_view option,
                                       absl::string_view value,
                                       const OptionPolicy& policy) {
  if (value.empty()) return Invalid(option, "needs a value");
  const std::string lower = absl::AsciiStrToLower(value);
  switch (spec.check) {
    case Check::kAny:
      return std::string(value);
    case Check::kBool:
      if (lower == "true" || lower == "false") return lower;
      return Invalid(option,
                     absl::StrCat("takes true or false, not '", value, "'"));
    case Check::kOnOff:
      if (lower == "on" || lower == "off") return lower;
      return Invalid(option,
                     absl::StrCat("takes on or off, not '", value, "'"));
    case Check::kCount: {
      int n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 0 || n > 1 << 20) {
        return Invalid(option,
                       absl::StrCat("takes a whole number, not '", value, "'"));
      }
      return absl::StrCat(n);
    }
    case Check::kStd: {
      static constexpr absl::string_view kStds[] = {"c++03", "c++11", "c++14",
                                                    "c++17", "c++20"};
      for (absl::string_view s : kStds) {
        if (lower == s) return lower;
      }
      return Invalid(option,
                     absl::StrCat("takes one of ", absl::StrJoin(kStds, ", "),
                                  ", not '", value, "'"));
    }
    case Check::kOfast:
      if (lower == "0" || lower == "min" || lower == "mid" || lower == "max") {
        return lower;
      }
      return Invalid(
          option, absl::StrCat("takes 0, min, mid or max, not '", value, "'"));
    case Check::kArch: {
      std::optional<Arch> arch = ParseArch(value);
      if (!arch) {
        return Invalid(option, absl::StrCat("'", value,
                                            "' is not an architecture such as "
                                            "sm_90 or compute_90"));
      }
      const auto& archs = policy.supported_archs;
      if (!archs.empty() &&
          std::find(archs.begin(), archs.end(), arch->number) == archs.end()) {
        std::vector<std::string> names;
        for (int a : archs) names.push_back(absl::StrCat("sm_", a));
        return Invalid(option, absl::StrCat("architecture ", value,
                                            " is not supported by this NVRTC "
                                            "(supported: ",
                                            absl::StrJoin(names, ", "), ")"));
      }
      return arch->canonical;
    }
    case Check::kIncludeDir: {
      std::filesystem::path path =
          std::filesystem::path(std::string(value)).lexically_normal();
      if (!path.has_filename()) path = path.parent_path();  // "dir/" == "dir"
      if (path.is_absolute()) {
        for (const std::string& dir : policy.allowed_include_dirs) {
          if (UnderDirectory(path,
                             std::filesystem::path(dir).lexically_normal())) {
            return path.string();
          }
        }
      }
      return Invalid(option,
                     absl::StrCat("include directory '", value,
                                  "' is refused: only the toolkit's include "
                                  "directories may be named, because other "
                                  "headers are not part of the cache key; "
                                  "send them as in-memory headers instead"));
    }
  }
  return Invalid(option, "cannot be checked");
}

}  // namespace

absl::StatusOr<CanonicalOptions> CanonicalizeCompileOptions(
    std::span<const std::string> raw, ObjectKind target,
    const OptionPolicy& policy) {
  std::map<absl::string_view, std::string> singles;  // long name -> value
  std::vector<absl::string_view> flags;
  std::vector<std::string> ordered;

  for (size_t i = 0; i < raw.size(); ++i) {
    const std::string& option = raw[i];
    if (option.size() < 2 || option[0] != '-') {
      return Invalid(option, "is not an option (options start with '-')");
    }
    absl::string_view body = absl::string_view(option).substr(
        absl::StartsWith(option, "--") ? 2 : 1);
    std::optional<absl::string_view> value;
    absl::string_view name = body;
    if (size_t eq = body.find('='); eq != absl::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    const Spec* spec = FindSpec(name);
    if (spec == nullptr && option[1] != '-') {
      for (absl::string_view short_name : kAttachedShort) {
        if (absl::StartsWith(body, short_name)) {
          spec = FindSpec(short_name);
          value = body.substr(short_name.size());
          break;
        }
      }
    }
    if (spec == nullptr) return Invalid(option, "unknown NVRTC option");
    if (!spec->refusal.empty()) {
      return Invalid(option, absl::StrCat("refused: ", spec->refusal));
    }
    if (spec->arg == Arg::kNone) {
      if (value.has_value()) return Invalid(option, "takes no value");
      flags.push_back(spec->long_name);
      continue;
    }
    if (!value.has_value()) {
      if (i + 1 >= raw.size()) return Invalid(option, "needs a value");
      value = raw[++i];
    }
    absl::StatusOr<std::string> canonical =
        CheckValue(*spec, option, *value, policy);
    if (!canonical.ok()) return canonical.status();
    if (spec->group == Group::kOrdered) {
      ordered.push_back(absl::StrCat("--", spec->long_name, "=", *canonical));
    } else {
      singles[spec->long_name] = *std::move(canonical);
    }
  }

  CanonicalOptions out;
  if (auto it = singles.find("gpu-architecture"); it != singles.end()) {
    out.arch = it->second;
  }
  const bool has_dlto =
      std::find(flags.begin(), flags.end(), "dlink-time-opt") != flags.end();
  switch (target) {
    case ObjectKind::kLtoir:
      if (!has_dlto) flags.push_back("dlink-time-opt");
      break;
    case ObjectKind::kCubin:
      if (!absl::StartsWith(out.arch, "sm_")) {
        return absl::InvalidArgumentError(
            "target cubin needs a real architecture: add -arch=sm_XX");
      }
      [[fallthrough]];
    case ObjectKind::kPtx:
      if (has_dlto) {
        return absl::InvalidArgumentError(
            "option '--dlink-time-opt' makes LTO-IR: ask for target ltoir");
      }
      break;
  }

  std::vector<std::string> position_free;
  for (const auto& [name, value] : singles) {
    if (name != "gpu-architecture") {
      position_free.push_back(absl::StrCat("--", name, "=", value));
    }
  }
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  for (absl::string_view flag : flags) {
    position_free.push_back(absl::StrCat("--", flag));
  }
  std::sort(position_free.begin(), position_free.end());

  if (!out.arch.empty()) {
    out.options.push_back(absl::StrCat("--gpu-architecture=", out.arch));
  }
  for (auto& o : position_free) out.options.push_back(std::move(o));
  for (auto& o : ordered) out.options.push_back(std::move(o));
  return out;
}

}  // namespace jitcache
