#include "common/option_parser.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jitcache::option_parser {
namespace {

absl::Status Invalid(absl::string_view option, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("option '", option, "': ", why));
}

const Spec* FindSpec(const Dialect& dialect, absl::string_view name) {
  for (const Spec& spec : dialect.specs) {
    if (name == spec.name || (!spec.alias.empty() && name == spec.alias)) {
      return &spec;
    }
  }
  return nullptr;
}

struct Arch {
  int number = 0;
  std::string canonical;
};

std::optional<Arch> ParseArch(absl::string_view value) {
  Arch arch;
  absl::string_view prefix, rest;
  if (absl::StartsWith(value, "sm_")) {
    prefix = "sm_";
  } else if (absl::StartsWith(value, "compute_")) {
    prefix = "compute_";
  } else {
    return std::nullopt;
  }
  rest = value.substr(prefix.size());
  absl::string_view suffix;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    suffix = rest.substr(rest.size() - 1);
    rest.remove_suffix(1);
  }
  if (rest.empty() || rest.size() > 4 ||
      !std::all_of(rest.begin(), rest.end(),
                   [](char c) { return absl::ascii_isdigit(c); }) ||
      !absl::SimpleAtoi(rest, &arch.number)) {
    return std::nullopt;
  }
  arch.canonical = absl::StrCat(prefix, arch.number, suffix);
  return arch;
}

absl::StatusOr<std::string> OneOf(absl::string_view option,
                                  absl::string_view value,
                                  std::span<const absl::string_view> allowed) {
  const std::string lower = absl::AsciiStrToLower(value);
  for (absl::string_view a : allowed) {
    if (lower == a) return lower;
  }
  return Invalid(option,
                 absl::StrCat("takes one of: ", absl::StrJoin(allowed, ", "),
                              "; not '", value, "'"));
}

// Checks a value and returns its canonical spelling.
absl::StatusOr<std::string> CheckValue(const Spec& spec,
                                       absl::string_view option,
                                       absl::string_view value,
                                       const Dialect& dialect,
                                       const OptionPolicy& policy) {
  if (value.empty()) return Invalid(option, "needs a value");
  switch (spec.check) {
    case Check::kAny:
      return std::string(value);
    case Check::kBool: {
      static constexpr absl::string_view kValues[] = {"true", "false"};
      return OneOf(option, value, kValues);
    }
    case Check::kOnOff: {
      static constexpr absl::string_view kValues[] = {"on", "off"};
      return OneOf(option, value, kValues);
    }
    case Check::kStd: {
      static constexpr absl::string_view kValues[] = {"c++03", "c++11", "c++14",
                                                      "c++17", "c++20"};
      return OneOf(option, value, kValues);
    }
    case Check::kOfast: {
      static constexpr absl::string_view kValues[] = {"0", "min", "mid", "max"};
      return OneOf(option, value, kValues);
    }
    case Check::kOptLevel: {
      static constexpr absl::string_view kValues[] = {"0", "1", "2", "3"};
      return OneOf(option, value, kValues);
    }
    case Check::kCount: {
      int n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 0 || n > 1 << 20) {
        return Invalid(option,
                       absl::StrCat("takes a whole number, not '", value, "'"));
      }
      return absl::StrCat(n);
    }
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
                                            " is not supported by this ",
                                            dialect.tool, " (supported: ",
                                            absl::StrJoin(names, ", "), ")"));
      }
      return arch->canonical;
    }
  }
  return Invalid(option, "cannot be checked");
}

std::string RenderOne(const Dialect& dialect, const Spec& spec,
                      absl::string_view value) {
  if (spec.arg == Arg::kNone) return absl::StrCat(dialect.prefix, spec.name);
  return absl::StrCat(dialect.prefix, spec.name, spec.glued ? "" : "=", value);
}

}  // namespace

absl::Status CheckCString(absl::string_view what, absl::string_view value) {
  const size_t nul = value.find('\0');
  if (nul == absl::string_view::npos) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " contains a NUL byte (the compiler would read '",
      absl::CEscape(value.substr(0, nul)), "' and nothing after it)"));
}

absl::StatusOr<Parsed> Parse(std::span<const std::string> raw,
                             const Dialect& dialect,
                             const OptionPolicy& policy) {
  Parsed parsed;
  for (size_t i = 0; i < raw.size(); ++i) {
    const std::string& option = raw[i];
    if (absl::Status s = CheckCString(absl::StrCat("option ", i + 1), option);
        !s.ok()) {
      return s;
    }
    if (option.size() < 2 || option[0] != '-') {
      return Invalid(option, "is not an option (options start with '-')");
    }
    const bool double_dash = absl::StartsWith(option, "--");
    absl::string_view body =
        absl::string_view(option).substr(double_dash ? 2 : 1);
    std::optional<absl::string_view> value;
    absl::string_view name = body;
    if (size_t eq = body.find('='); eq != absl::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    const Spec* spec = FindSpec(dialect, name);
    if (spec == nullptr && !double_dash) {
      for (absl::string_view glued : dialect.glued_names) {
        if (absl::StartsWith(body, glued) && body.size() > glued.size()) {
          spec = FindSpec(dialect, glued);
          value = body.substr(glued.size());
          break;
        }
      }
    }
    if (spec == nullptr) {
      return Invalid(option, absl::StrCat("unknown ", dialect.tool, " option"));
    }
    if (!spec->refusal.empty()) {
      return Invalid(option, absl::StrCat("refused: ", spec->refusal));
    }
    if (spec->arg == Arg::kNone) {
      if (value.has_value()) return Invalid(option, "takes no value");
      parsed.flags.insert(std::string(spec->name));
      continue;
    }
    if (!value.has_value()) {
      if (i + 1 >= raw.size()) return Invalid(option, "needs a value");
      value = raw[++i];
    }
    absl::StatusOr<std::string> canonical =
        CheckValue(*spec, option, *value, dialect, policy);
    if (!canonical.ok()) return canonical.status();
    switch (spec->group) {
      case Group::kOrdered:
        parsed.ordered.push_back(RenderOne(dialect, *spec, *canonical));
        break;
      case Group::kSet:
        parsed.sets.insert(RenderOne(dialect, *spec, *canonical));
        break;
      default:
        parsed.singles[std::string(spec->name)] = *std::move(canonical);
        break;
    }
  }
  return parsed;
}

std::vector<std::string> Render(const Parsed& parsed, const Dialect& dialect) {
  std::vector<std::string> out;
  std::vector<std::string> position_free;
  for (const auto& [name, value] : parsed.singles) {
    const Spec* spec = FindSpec(dialect, name);
    std::string rendered = RenderOne(dialect, *spec, value);
    if (name == dialect.arch_name) {
      out.push_back(std::move(rendered));
    } else {
      position_free.push_back(std::move(rendered));
    }
  }
  for (const std::string& flag : parsed.flags) {
    position_free.push_back(absl::StrCat(dialect.prefix, flag));
  }
  position_free.insert(position_free.end(), parsed.sets.begin(),
                       parsed.sets.end());
  std::sort(position_free.begin(), position_free.end());
  out.insert(out.end(), position_free.begin(), position_free.end());
  out.insert(out.end(), parsed.ordered.begin(), parsed.ordered.end());
  return out;
}

}  // namespace jitcache::option_parser
