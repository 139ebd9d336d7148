#ifndef JITCACHE_CLIENT_RPC_MESSAGES_H_
#define JITCACHE_CLIENT_RPC_MESSAGES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jitcache/client.h"
#include "jitcache/object_code.h"
#include "jitcache/program.h"
#include "jitcache/store_admin.h"
#include "jitcache/v1/jitcache.pb.h"

namespace jitcache {

// The public API's values and the wire's messages, each way. Pure
// functions; any thread.

namespace internal {
// The NVRTC options for `target`: the options' own, and -dlto for LTO-IR
// unless they ask for it already (NVRTC makes LTO-IR only then), and
// -optix-ir for OptiX IR likewise. What the daemon is sent and what a local
// compile runs.
std::vector<std::string> NvrtcOptionsFor(const ProgramOptions& options,
                                         CodeType target);
}  // namespace internal

// The request for compiling `program` with `options` to `target`, before
// its includes are resolved (see internal::ResolveIncludes).
v1::CompileRequest CompileRequestFor(const Program& program,
                                     const ProgramOptions& options,
                                     CodeType target);

// How a response was served, as the API says it (an unknown number: a
// miss).
Served FromWire(v1::Served served);

// The answer as the API gives it; takes the object and log out of
// `response` rather than copying them.
ObjectCode ToObjectCode(v1::CompileResponse& response, CodeType target,
                        const std::string& name);

namespace internal {
// A member of a public struct and the field of the wire message it holds:
// the one place the typed stats meet the proto. ClientMessages.* checks
// that every number of the proto has exactly one member here.
template <typename T>
struct FieldMember {
  std::string_view field;
  std::variant<uint64_t T::*, unsigned T::*, double T::*, std::string T::*>
      member;
};
std::span<const FieldMember<DaemonStats>>
DaemonStatsMembers();                                        // of StatsResponse
std::span<const FieldMember<UserUsage>> UserUsageMembers();  // of UserStats
}  // namespace internal

// Every number of the answer under its wire name (DaemonStats::values, by
// reflection), and the typed members, field by field through the tables
// above.
DaemonStats DaemonStatsFrom(const v1::StatsResponse& r);

// A toolkit file the daemon uses (a library, a ptxas binary).
DaemonInfo::Library LibraryFrom(const v1::ToolkitLibrary& lib);

// `jitcache ls`'s filter and order as the daemon's ListEntries request.
v1::ListEntriesRequest ToListEntriesRequest(const ListOptions& options);

}  // namespace jitcache

#endif  // JITCACHE_CLIENT_RPC_MESSAGES_H_
