#ifndef JITCACHE_COMMON_OPTION_PARSER_H_
#define JITCACHE_COMMON_OPTION_PARSER_H_

#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/plain_status.h"

namespace jitcache {

// What the daemon knows of its toolchain when it checks options.
struct OptionPolicy {
  // Numbers from nvrtcGetSupportedArchs (75, 80, 90, ...). Empty: any.
  std::vector<int> supported_archs;
};

// The engine under CanonicalizeCompileOptions and CanonicalizeLinkOptions:
// a table of the options a tool accepts, and one canonical spelling for each.
namespace option_parser {

enum class Arg { kNone, kValue };
enum class Check {
  kAny,
  kBool,
  kOnOff,
  kCount,
  kStd,
  kArch,
  kOfast,
  kOptLevel,
};
// kSingle: one value, the last wins, position free. kFlag: present or not.
// kOrdered: repeatable and position matters. kSet: repeatable, order free.
enum class Group { kSingle, kFlag, kOrdered, kSet };

struct Spec {
  std::string_view name;   // the canonical name
  std::string_view alias;  // another accepted name ("" for none)
  Arg arg;
  Check check;
  Group group;
  std::string_view refusal = {};  // non-empty: refused, and why
  bool glued = false;             // canonical "-O3" rather than "-O=3"
};

struct Dialect {
  std::string_view tool;  // for messages: "NVRTC", "nvJitLink"
  std::span<const Spec> specs;
  // Names that also take their value glued on: -DNAME, -Idir, -O3.
  std::span<const std::string_view> glued_names;
  std::string_view prefix;     // of canonical spellings: "--" or "-"
  std::string_view arch_name;  // the option rendered first
};

struct Parsed {
  std::map<std::string, std::string> singles;  // name -> canonical value
  std::set<std::string> flags;
  std::vector<std::string> ordered;  // already rendered
  std::set<std::string> sets;        // already rendered

  bool has_flag(std::string_view name) const {
    return flags.count(std::string(name)) > 0;
  }
  std::string single(std::string_view name) const {
    auto it = singles.find(std::string(name));
    return it == singles.end() ? std::string() : it->second;
  }
};

// The toolkit's libraries read options (and names) as C strings: what
// follows a NUL they never see, so no key may hold it either.
// INVALID_ARGUMENT naming `what` when `value` holds one.
PlainStatus CheckCString(std::string_view what, std::string_view value);

// INVALID_ARGUMENT naming the option for anything unknown, malformed or
// refused.
PlainStatusOr<Parsed> Parse(std::span<const std::string> raw,
                            const Dialect& dialect, const OptionPolicy& policy);

// The canonical list: the arch first, then position-free options sorted,
// then the ordered ones in their order.
std::vector<std::string> Render(const Parsed& parsed, const Dialect& dialect);

}  // namespace option_parser
}  // namespace jitcache

#endif  // JITCACHE_COMMON_OPTION_PARSER_H_
