#ifndef JITCACHE_CLIENT_WIRE_COMPILE_WIRE_H_
#define JITCACHE_CLIENT_WIRE_COMPILE_WIRE_H_

// The protobuf wire format of CompileRequest and CompileResponse
// (proto/jitcache/v1/jitcache.proto), written by hand so that the
// `jitcache` front end and libnvrtc.so.13 need neither protobuf nor gRPC at
// run time. Only the fields they use; field numbers in
// proto/jitcache/v1/wire_fields.h, checked against the .proto's.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitcache::compile_wire {

struct Request {
  std::string source;
  std::string program_name;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> options;
  std::vector<std::string> name_expressions;
  int target = 0;  // v1::Target
  // The include scan's (client/include_scan/included_files.h).
  bool includes_resolved = false;
  struct IncludedFile {
    std::string path;
    std::string contents;
    int64_t mtime_ns = 0;
  };
  std::vector<IncludedFile> included_files;
  std::string included_set_sha256;  // raw
  bool exact_include_path = false;
  std::string working_directory;
  std::vector<int64_t> included_mtimes_ns;
};

struct Response {
  int outcome = 0;  // wire::Outcome
  std::string object;
  std::string log;
  std::vector<std::pair<std::string, std::string>> lowered_names;
  std::string cache_key;
  int served = 0;
  int64_t compile_time_us = 0;
};

// A CompileResponse viewed where its bytes lie (the answer buffer must
// outlive it): what libnvrtc.so.13 hands its caller without copying.
struct ResponseView {
  int outcome = 0;
  std::string_view object;
  std::string_view log;
  std::vector<std::pair<std::string_view, std::string_view>> lowered_names;
  std::string_view cache_key;
  int served = 0;
  int64_t compile_time_us = 0;
  std::string_view object_digest;
  bool served_remotely = false;
  bool proof_pending = false;
};

std::string Encode(const Request& request);
// Appends the encoding to `out` (a warm buffer costs no allocation).
void EncodeTo(const Request& request, std::string& out);
// nullopt when the bytes are not a well-formed CompileResponse.
std::optional<Response> Decode(std::string_view bytes);
std::optional<ResponseView> DecodeView(std::string_view bytes);
// What a PingResponse says of the daemon's toolkit: its include
// directories and fingerprint; nullopt when the bytes are not a
// well-formed one.
struct Toolkit {
  std::vector<std::string> include_dirs;
  std::string fingerprint;
};
std::optional<Toolkit> DecodeToolkit(std::string_view bytes);

}  // namespace jitcache::compile_wire

#endif  // JITCACHE_CLIENT_WIRE_COMPILE_WIRE_H_
