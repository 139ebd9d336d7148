#ifndef JITCACHE_CLIENT_WIRE_LINK_WIRE_H_
#define JITCACHE_CLIENT_WIRE_LINK_WIRE_H_

// An as-called LinkRequest, the CompileResponse that answers it, and the
// libraries of a PingResponse (proto/jitcache/v1/jitcache.proto), written
// and read by hand so that libnvJitLink.so.13 loads neither protobuf nor
// gRPC: every process it is preloaded into paid about 16 ms for loading
// them. Only the fields the library uses; field numbers must follow the
// .proto (a unit test checks both directions against the generated code).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/wire/ptxas_wire.h"
#include "client/wire/real_library.h"
#include "common/file_stamp.h"

namespace jitcache::link_wire {

struct Input {
  int kind = 0;  // v1::ObjectKind
  std::string name;
  std::string digest;  // lower-case hex SHA-256 of bytes
  std::string bytes;
  // Added as NVJITLINK_INPUT_ANY: nvJitLink types it by its bytes, and
  // `kind` is only how the daemon's store files it.
  bool typed_by_content = false;
  // PTX that names source files: what this process's stat says of each.
  std::vector<ptxas_wire::Source> sources;
};

// A LinkRequest with as_called set: options as spelled, inputs in order,
// each by digest, or by its bytes when `send_bytes` (and not `steps_only`).
// `disproves`: the caller's own nvJitLink answered otherwise than the
// record (LinkRequest.disproves; with the bytes).
std::string Encode(const std::vector<std::string>& options,
                   const std::vector<Input>& inputs, bool steps_only,
                   bool send_bytes, bool disproves = false);

// What one nvJitLink call answered, and the logs right after it.
struct Step {
  int result = 0;
  int error_size_result = 0;
  std::string error_log;
  int info_size_result = 0;
  std::string info_log;
  std::string stderr_text;  // what the call wrote on standard error
  bool operator==(const Step&) const = default;
};

// The daemon's record of a link: nvJitLinkCreate, each nvJitLinkAddData,
// then (complete) nvJitLinkComplete and the output calls' answers.
struct Trace {
  bool handle_created = false;
  std::vector<Step> steps;
  bool complete = false;
  int cubin_size_result = 0, cubin_result = 0;
  int ptx_size_result = 0, ptx_result = 0;
  std::string cubin;  // the response's object
  std::string ptx;
};

// nullopt when the bytes are not a well-formed CompileResponse holding a
// link trace.
std::optional<Trace> Decode(std::string_view bytes);

// One of the toolkit libraries a PingResponse names.
struct Library {
  std::string name;
  std::string path;
  FileStamp stamp;
  uint32_t major = 0, minor = 0;
  // libNVVM's nvvmIRVersion answer.
  uint32_t ir_major = 0, ir_minor = 0, debug_major = 0, debug_minor = 0;
};

// A PingResponse's libraries; nullopt when the bytes are not a well-formed
// PingResponse.
std::optional<std::vector<Library>> DecodeLibraries(std::string_view bytes);

// Each library's name, path and stamp, for SameRealLibrary (viewing
// `libraries`, which must outlive them).
std::vector<DaemonLibrary> Identities(const std::vector<Library>& libraries);

}  // namespace jitcache::link_wire

#endif  // JITCACHE_CLIENT_WIRE_LINK_WIRE_H_
