#include "common/ptxas_command.h"

namespace jitcache {
namespace {

struct PtxasOption {
  std::string_view name;   // after "--"
  std::string_view alias;  // after "-"
  bool takes_value;
};

// The options of `ptxas --help` (CUDA 12 and 13) that read and write no
// file. Left out on purpose: --options-file and --input-as-string (inputs
// besides the PTX file), --split-compile (whether its output depends on
// the machine is not documented), --help, --version, --list-version.
constexpr PtxasOption kOptions[] = {
    {"Ofast-compile", "Ofc", true},
    {"allow-expensive-optimizations", "allow-expensive-optimizations", true},
    {"compile-as-tools-patch", "astoolspatch", false},
    {"compile-only", "c", false},
    {"compiler-annotations", "annotate", false},
    {"def-load-cache", "dlcm", true},
    {"def-store-cache", "dscm", true},
    {"device-debug", "g", false},
    {"device-function-maxrregcount", "func-maxrregcount", true},
    {"device-stack-protector", "device-stack-protector", true},
    {"disable-optimizer-constants", "disable-optimizer-consts", false},
    {"disable-warnings", "w", false},
    {"dont-merge-basicblocks", "no-bb-merge", false},
    {"entry", "e", true},
    {"extensible-whole-program", "ewp", false},
    {"fmad", "fmad", true},
    {"force-load-cache", "flcm", true},
    {"force-store-cache", "fscm", true},
    {"g-tensor-memory-access-check", "g-tmem-access-check", false},
    {"generate-line-info", "lineinfo", false},
    {"gno-tensor-memory-access-check", "gno-tmem-access-check", false},
    {"gpu-name", "arch", true},
    {"legacy-bar-warp-wide-behavior", "legacy-bar-warp-wide-behavior", false},
    {"machine", "m", true},
    {"make-errors-visible-at-exit", "make-errors-visible-at-exit", false},
    {"maxntid", "maxntid", true},
    {"maxrregcount", "maxrregcount", true},
    {"minnctapersm", "minnctapersm", true},
    {"opt-level", "O", true},
    {"optimize-float-atomics", "opt-fp-atomics", false},
    {"output-file", "o", true},
    {"override-directive-values", "override-directive-values", false},
    {"position-independent-code", "pic", true},
    {"preserve-relocs", "preserve-relocs", false},
    {"register-usage-level", "regUsageLevel", true},
    {"return-at-end", "ret-end", false},
    {"sanitize", "sanitize", true},
    {"sp-bounds-check", "sp-bounds-check", false},
    {"suppress-async-bulk-multicast-advisory-warning",
     "suppress-async-bulk-multicast-advisory-warning", false},
    {"suppress-debug-info", "suppress-debug-info", false},
    {"suppress-double-demote-warning", "suppress-double-demote-warning", false},
    {"suppress-sparse-mma-advisory-info", "suppress-sparse-mma-advisory-info",
     false},
    {"suppress-stack-size-warning", "suppress-stack-size-warning", false},
    {"verbose", "v", false},
    {"warn-on-double-precision-use", "warn-double-usage", false},
    {"warn-on-local-memory-usage", "warn-lmem-usage", false},
    {"warn-on-spills", "warn-spills", false},
    {"warning-as-error", "Werror", false},
};

// Path markers: a NUL can be in no argument (the parser refuses it).
constexpr std::string_view kInputMarker{"\0input", 6};
constexpr std::string_view kOutputMarker{"\0output", 7};

const PtxasOption* Find(std::string_view spelled) {
  std::string_view name = spelled;
  if (name.starts_with("--")) {
    name.remove_prefix(2);
    for (const PtxasOption& o : kOptions) {
      if (o.name == name) return &o;
    }
    return nullptr;
  }
  if (!name.starts_with("-")) return nullptr;
  name.remove_prefix(1);
  for (const PtxasOption& o : kOptions) {
    if (o.alias == name) return &o;
  }
  return nullptr;
}

std::optional<PtxasCommand> RunAsIs(std::string why, std::string* out) {
  *out = std::move(why);
  return std::nullopt;
}

bool HasNul(const std::string& arg) {
  return arg.find('\0') != std::string::npos;
}

}  // namespace

std::string PtxasCommand::output_path() const {
  if (!output.has_value()) return std::string(kPtxasDefaultOutput);
  return arguments[*output].substr(output_offset);
}

std::vector<std::string> PtxasCommand::WithoutNames() const {
  std::vector<std::string> out = arguments;
  out[input] = std::string(kInputMarker);
  if (output.has_value()) {
    out[*output] =
        out[*output].substr(0, output_offset) + std::string(kOutputMarker);
  }
  return out;
}

std::optional<PtxasCommand> ParsePtxasCommand(
    std::vector<std::string> arguments, std::string* why) {
  PtxasCommand command;
  std::optional<size_t> input;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& arg = arguments[i];
    if (HasNul(arg)) return RunAsIs("a NUL byte in an argument", why);
    if (arg.empty() || arg[0] != '-') {
      // "a.ptx,b.ptx" is a list of inputs to ptxas.
      if (input.has_value() || arg.empty() ||
          arg.find(',') != std::string::npos) {
        return RunAsIs("not exactly one PTX file", why);
      }
      input = i;
      continue;
    }
    // "-O 2": ptxas reads the 2 as an input file, not as the level.
    if (arg == "-O") {
      return RunAsIs("-O with its level apart (ptxas reads it as a file)", why);
    }
    // "-O3": the one option whose value may be glued on.
    if (arg.size() > 2 && arg[1] == 'O' &&
        arg.find_first_not_of("0123456789", 2) == std::string::npos) {
      continue;
    }
    const size_t eq = arg.find('=');
    const PtxasOption* option = Find(std::string_view(arg).substr(0, eq));
    if (option == nullptr) return RunAsIs("option " + arg, why);
    if (!option->takes_value) {
      if (eq != std::string::npos) return RunAsIs("option " + arg, why);
      continue;
    }
    size_t value_arg = i;
    size_t value_offset = eq + 1;
    if (eq == std::string::npos) {
      if (i + 1 >= arguments.size()) {
        return RunAsIs(arg + " without its value", why);
      }
      value_arg = ++i;
      value_offset = 0;
      if (HasNul(arguments[i])) {
        return RunAsIs("a NUL byte in an argument", why);
      }
    }
    if (option->name == "output-file") {
      // ptxas takes the last and warns; one is all the key needs to know.
      if (command.output.has_value()) return RunAsIs("two output files", why);
      if (arguments[value_arg].size() == value_offset) {
        return RunAsIs("an empty output file name", why);
      }
      command.output = value_arg;
      command.output_offset = value_offset;
    }
  }
  if (!input.has_value()) return RunAsIs("no PTX file", why);
  command.input = *input;
  command.arguments = std::move(arguments);
  return command;
}

}  // namespace jitcache
