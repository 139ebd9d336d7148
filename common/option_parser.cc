#include "common/option_parser.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

#include "common/plain_status.h"
#include "common/text.h"

namespace jitcache::option_parser {
namespace {

PlainStatus Invalid(std::string_view option, std::string_view why) {
  return PlainStatus::Error(text::Cat("option '", option, "': ", why));
}

const Spec* FindSpec(const Dialect& dialect, std::string_view name) {
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

std::optional<Arch> ParseArch(std::string_view value) {
  Arch arch;
  std::string_view prefix, rest;
  if (text::StartsWith(value, "sm_")) {
    prefix = "sm_";
  } else if (text::StartsWith(value, "compute_")) {
    prefix = "compute_";
  } else {
    return std::nullopt;
  }
  rest = value.substr(prefix.size());
  std::string_view suffix;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    suffix = rest.substr(rest.size() - 1);
    rest.remove_suffix(1);
  }
  if (rest.empty() || rest.size() > 4 ||
      !std::all_of(rest.begin(), rest.end(),
                   [](char c) { return text::IsDigit(c); }) ||
      !text::ParseInt(rest, &arch.number)) {
    return std::nullopt;
  }
  arch.canonical = text::Cat(prefix, arch.number, suffix);
  return arch;
}

PlainStatusOr<std::string> OneOf(std::string_view option,
                                 std::string_view value,
                                 std::span<const std::string_view> allowed) {
  const std::string lower = text::ToLower(value);
  for (std::string_view a : allowed) {
    if (lower == a) return lower;
  }
  return Invalid(option, text::Cat("takes one of: ", text::Join(allowed, ", "),
                                   "; not '", value, "'"));
}

// Checks a value and returns its canonical spelling.
PlainStatusOr<std::string> CheckValue(const Spec& spec, std::string_view option,
                                      std::string_view value,
                                      const Dialect& dialect,
                                      const OptionPolicy& policy) {
  if (value.empty()) return Invalid(option, "needs a value");
  switch (spec.check) {
    case Check::kAny:
      return std::string(value);
    case Check::kBool: {
      static constexpr std::string_view kValues[] = {"true", "false"};
      return OneOf(option, value, kValues);
    }
    case Check::kOnOff: {
      static constexpr std::string_view kValues[] = {"on", "off"};
      return OneOf(option, value, kValues);
    }
    case Check::kStd: {
      static constexpr std::string_view kValues[] = {"c++03", "c++11", "c++14",
                                                     "c++17", "c++20"};
      return OneOf(option, value, kValues);
    }
    case Check::kOfast: {
      static constexpr std::string_view kValues[] = {"0", "min", "mid", "max"};
      return OneOf(option, value, kValues);
    }
    case Check::kOptLevel: {
      static constexpr std::string_view kValues[] = {"0", "1", "2", "3"};
      return OneOf(option, value, kValues);
    }
    case Check::kCount: {
      int n = 0;
      if (!text::ParseInt(value, &n) || n < 0 || n > 1 << 20) {
        return Invalid(option,
                       text::Cat("takes a whole number, not '", value, "'"));
      }
      return text::Cat(n);
    }
    case Check::kArch: {
      std::optional<Arch> arch = ParseArch(value);
      if (!arch) {
        return Invalid(option, text::Cat("'", value,
                                         "' is not an architecture such as "
                                         "sm_90 or compute_90"));
      }
      const auto& archs = policy.supported_archs;
      if (!archs.empty() &&
          std::find(archs.begin(), archs.end(), arch->number) == archs.end()) {
        std::vector<std::string> names;
        for (int a : archs) names.push_back(text::Cat("sm_", a));
        return Invalid(
            option, text::Cat("architecture ", value,
                              " is not supported by this ", dialect.tool,
                              " (supported: ", text::Join(names, ", "), ")"));
      }
      return arch->canonical;
    }
  }
  return Invalid(option, "cannot be checked");
}

std::string RenderOne(const Dialect& dialect, const Spec& spec,
                      std::string_view value) {
  if (spec.arg == Arg::kNone) return text::Cat(dialect.prefix, spec.name);
  return text::Cat(dialect.prefix, spec.name, spec.glued ? "" : "=", value);
}

}  // namespace

PlainStatus CheckCString(std::string_view what, std::string_view value) {
  const size_t nul = value.find('\0');
  if (nul == std::string_view::npos) return PlainStatus();
  return PlainStatus::Error(text::Cat(
      what, " contains a NUL byte (the compiler would read '",
      text::CEscape(value.substr(0, nul)), "' and nothing after it)"));
}

PlainStatusOr<Parsed> Parse(std::span<const std::string> raw,
                            const Dialect& dialect,
                            const OptionPolicy& policy) {
  Parsed parsed;
  for (size_t i = 0; i < raw.size(); ++i) {
    const std::string& option = raw[i];
    if (PlainStatus s = CheckCString(text::Cat("option ", i + 1), option);
        !s.ok()) {
      return s;
    }
    if (option.size() < 2 || option[0] != '-') {
      return Invalid(option, "is not an option (options start with '-')");
    }
    const bool double_dash = text::StartsWith(option, "--");
    std::string_view body =
        std::string_view(option).substr(double_dash ? 2 : 1);
    std::optional<std::string_view> value;
    std::string_view name = body;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    const Spec* spec = FindSpec(dialect, name);
    if (spec == nullptr && !double_dash) {
      for (std::string_view glued : dialect.glued_names) {
        if (text::StartsWith(body, glued) && body.size() > glued.size()) {
          spec = FindSpec(dialect, glued);
          value = body.substr(glued.size());
          break;
        }
      }
    }
    if (spec == nullptr) {
      return Invalid(option, text::Cat("unknown ", dialect.tool, " option"));
    }
    if (!spec->refusal.empty()) {
      return Invalid(option, text::Cat("refused: ", spec->refusal));
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
    PlainStatusOr<std::string> canonical =
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
    position_free.push_back(text::Cat(dialect.prefix, flag));
  }
  position_free.insert(position_free.end(), parsed.sets.begin(),
                       parsed.sets.end());
  std::sort(position_free.begin(), position_free.end());
  out.insert(out.end(), position_free.begin(), position_free.end());
  out.insert(out.end(), parsed.ordered.begin(), parsed.ordered.end());
  return out;
}

}  // namespace jitcache::option_parser
