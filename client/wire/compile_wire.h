#ifndef JITCACHE_CLIENT_WIRE_COMPILE_WIRE_H_
#define JITCACHE_CLIENT_WIRE_COMPILE_WIRE_H_

// The protobuf wire format of CompileRequest and CompileResponse
// (proto/jitcache/v1/jitcache.proto), written by hand so that the
// `jitcache` front end needs neither protobuf nor gRPC at run time. Only the
// fields the hit path uses; field numbers must follow the .proto.
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
};

struct Response {
  int outcome = 0;  // v1::Outcome: 1 OK, 2 COMPILE_ERROR
  std::string object;
  std::string log;
  std::vector<std::pair<std::string, std::string>> lowered_names;
  std::string cache_key;
  int served = 0;
  int64_t compile_time_us = 0;
};

std::string Encode(const Request& request);
// nullopt when the bytes are not a well-formed CompileResponse.
std::optional<Response> Decode(std::string_view bytes);
// The toolchain_fingerprint of a PingResponse (the framed socket's answer to
// kToolkit); nullopt when the bytes are not a well-formed one.
std::optional<std::string> DecodeToolkitFingerprint(std::string_view bytes);

}  // namespace jitcache::compile_wire

#endif  // JITCACHE_CLIENT_WIRE_COMPILE_WIRE_H_
