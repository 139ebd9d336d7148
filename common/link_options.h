#ifndef JITCACHE_COMMON_LINK_OPTIONS_H_
#define JITCACHE_COMMON_LINK_OPTIONS_H_

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/object_kind.h"
#include "common/option_parser.h"

namespace jitcache {

struct CanonicalLinkOptions {
  std::string arch;                  // "sm_90"; always present
  std::vector<std::string> options;  // what nvJitLink receives; in the key
};

// nvJitLink's options in one canonical spelling ("-name" or "-name=value",
// "-O3"), as CanonicalizeCompileOptions does for NVRTC: -Xptxas keeps its
// order, -kernels-used / -variables-used are sets, the rest are single-valued
// and sorted. -arch=sm_XX is required; target PTX implies -ptx, and LTO-IR
// among the inputs implies -lto. -time is
// refused (its output differs on every run, and would be cached in the log).
// Pure; thread-safe.
absl::StatusOr<CanonicalLinkOptions> CanonicalizeLinkOptions(
    std::span<const std::string> raw, ObjectKind target, bool ltoir_inputs,
    const OptionPolicy& policy);

// Options as spelled for nvJitLinkCreate whose answers hold the moment:
// those the canonical form refuses for it (-time), and -verbose and
// ptxas's -v, whose info log has a "Compile time" line. No record of such
// a link is what the real nvJitLink would answer. Pure; thread-safe.
bool LinkOptionsReportTimes(std::span<const std::string> options);

// Whether the options make the link read a file of the caller's (ptxas's
// options file through -Xptxas): its contents are not in the request, so
// the caller's own nvJitLink links it.
bool LinkOptionsReadFiles(std::span<const std::string> options);

}  // namespace jitcache

#endif  // JITCACHE_COMMON_LINK_OPTIONS_H_
