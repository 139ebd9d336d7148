#ifndef JITCACHE_COMMON_COMPILE_OPTIONS_H_
#define JITCACHE_COMMON_COMPILE_OPTIONS_H_

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/object_kind.h"
#include "common/option_parser.h"

namespace jitcache {

// Canonical spellings (see CanonicalizeCompileOptions) that others read.
inline constexpr absl::string_view kIncludePathOption = "--include-path=";
inline constexpr absl::string_view kPreIncludeOption = "--pre-include=";
inline constexpr absl::string_view kDefineMacroOption = "--define-macro=";

struct CanonicalOptions {
  std::string arch;                  // "sm_90", "compute_80a"; "" if absent
  std::vector<std::string> options;  // what NVRTC receives; part of the key
};

// Turns a user's NVRTC option list into one canonical list, so that options
// meaning the same thing give the same key:
//  - every spelling becomes "--long-name" or "--long-name=value"
//    (-arch=sm_90, -arch sm_90, --gpu-architecture sm_90 are one option);
//  - options whose position matters (-D, -U, -I, -include, -Xptxas and the
//    diagnostic controls) keep their relative order;
//  - the others are single-valued (the last occurrence wins, as in NVRTC)
//    and are sorted by name;
//  - the target implies its options (LTO-IR adds --dlink-time-opt).
// Unknown or malformed options, an unsupported architecture, and options that
// would make the output depend on files outside the key (PCH, -time, -I
// outside the toolkit) are INVALID_ARGUMENT naming the option.
// Pure function; thread-safe.
absl::StatusOr<CanonicalOptions> CanonicalizeCompileOptions(
    std::span<const std::string> raw, ObjectKind target,
    const OptionPolicy& policy);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_COMPILE_OPTIONS_H_
