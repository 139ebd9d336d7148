#ifndef JITCACHE_CLIENT_WIRE_PTXAS_WIRE_H_
#define JITCACHE_CLIENT_WIRE_PTXAS_WIRE_H_

// PtxasRequest and the CompileResponse that answers it
// (proto/jitcache/v1/jitcache.proto), written and read by hand so that
// jitcache-ptxas loads neither protobuf nor gRPC: it is started once per
// kernel, and loading them cost each run about 10 ms. Only the fields
// jitcache-ptxas uses; field numbers must follow the .proto (a unit test
// checks both directions against the generated code).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_stamp.h"

namespace jitcache::ptxas_wire {

struct Source {
  std::string path;  // as the PTX's .file directive spells it
  bool exists = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

struct Request {
  std::string ptxas_path;  // every link resolved
  FileStamp ptxas_stamp;
  std::string program;  // argv[0]
  std::vector<std::string> arguments;
  std::string ptx;
  std::string working_directory;
  bool with_names = false;
  std::vector<Source> sources;
};

struct Answer {
  int exit_status = 0;
  std::string stdout_bytes;
  std::string stderr_bytes;  // the response's log
  bool output_written = false;
  std::string output;  // the response's object
  bool names_matter = false;
  int served = 0;  // v1::Served: 1 a hit
};

// What this process's stat says of each source the PTX names (`paths`,
// ptx_sources.h), in order; nullopt, with `why`, for a source that is no
// regular file or cannot be looked at.
std::optional<std::vector<Source>> StatSources(
    const std::vector<std::string>& paths, std::string* why);
// `source` as a PtxasSource, field `field` of `out`.
void PutSource(std::string& out, int field, const Source& source);

std::string Encode(const Request& request);
// nullopt when the bytes are not a well-formed CompileResponse holding a
// ptxas run.
std::optional<Answer> Decode(std::string_view bytes);

}  // namespace jitcache::ptxas_wire

#endif  // JITCACHE_CLIENT_WIRE_PTXAS_WIRE_H_
