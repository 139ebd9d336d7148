#ifndef JITCACHE_COMMON_COMPILE_OPTIONS_H_
#define JITCACHE_COMMON_COMPILE_OPTIONS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/object_kind.h"
#include "common/option_parser.h"
#include "common/plain_status.h"

namespace jitcache {

// Canonical spellings (see CanonicalizeCompileOptions) that others read.
inline constexpr std::string_view kIncludePathOption = "--include-path=";
inline constexpr std::string_view kPreIncludeOption = "--pre-include=";
inline constexpr std::string_view kDefineMacroOption = "--define-macro=";

struct CanonicalOptions {
  std::string arch;                  // "sm_90", "compute_80a"; "" if absent
  std::vector<std::string> options;  // what NVRTC receives; part of the key
};

// Checks a user's NVRTC option list and passes it on exactly as spelled:
// NVRTC keeps state in how an option was written (-maxrregcount=032 is
// octal to it, -ftz=TRUE an error), so two spellings share a key only if
// they are the same text. The table (kNvrtcSpecs) is what the daemon
// understands of them: the architecture, and options it refuses because
// they write or read files outside the key (PCH, -time, dependency files).
// Unknown options are INVALID_ARGUMENT naming the option, so that the
// caller's own NVRTC compiles them instead; an option the table takes but
// NVRTC refuses fails the compile, which is never cached.
// Pure function; thread-safe.
PlainStatusOr<CanonicalOptions> CanonicalizeCompileOptions(
    std::span<const std::string> raw, ObjectKind target,
    const OptionPolicy& policy);

// Whether NVRTC makes LTO-IR for these options: they hold -dlto or
// --dlink-time-opt, the spellings it accepts (the differential corpus
// tries the others, which it refuses).
bool AsksForLtoIr(std::span<const std::string> options);

// Whether NVRTC makes OptiX IR (and no PTX, cubin or LTO-IR) for these
// options: they hold -optix-ir or --optix-ir.
bool AsksForOptixIr(std::span<const std::string> options);

// The options whose order matters (-D, -U, -I, -include, ...), each in its
// canonical spelling ("--include-path=DIR", "--pre-include=FILE",
// "--define-macro=X=1"), in their order: what a scan of the files a
// program may read needs to know. Only for reading: NVRTC gets `raw`.
PlainStatusOr<std::vector<std::string>> OrderedCompileOptions(
    std::span<const std::string> raw);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_COMPILE_OPTIONS_H_
