#ifndef JITCACHE_CLIENT_WIRE_NVVM_WIRE_H_
#define JITCACHE_CLIENT_WIRE_NVVM_WIRE_H_

// An NvvmRequest and the CompileResponse that answers it
// (proto/jitcache/v1/jitcache.proto), written and read by hand so that
// libnvvm.so.4 loads neither protobuf nor gRPC (as link_wire.h). Only the
// fields the library uses; field numbers must follow the .proto (a unit
// test checks both directions against the generated code).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/wire/link_wire.h"

namespace jitcache::nvvm_wire {

// v1::NvvmCallKind.
enum CallKind { kAddModule = 1, kLazyAddModule = 2, kCompile = 3, kVerify = 4 };

struct Call {
  CallKind kind = kCompile;
  std::string name;  // a module's
  bool unnamed = false;
  std::string module;                // a module's bytes
  std::string digest;                // lower-case hex SHA-256 of module
  std::vector<std::string> options;  // a compile's or verify's
};

// An NvvmRequest for `libnvvm` (the caller's file, as the daemon named
// it): every call, each module by digest, and by its bytes too when
// `with_modules`.
template <typename Calls>
std::string Encode(const link_wire::Library& libnvvm, const Calls& calls,
                   bool with_modules);

// What the last call and the reads after it answered (v1::NvvmRun), and
// the compiled result's buffer.
struct Answer {
  int result = 0;
  int log_size_result = 0;
  std::string log;
  int log_result = 0;
  int output_size_result = 0;
  int output_result = 0;
  std::string output;
};

// nullopt when the bytes are not a well-formed CompileResponse holding an
// NvvmRun.
std::optional<Answer> Decode(std::string_view bytes);

// Encoding helpers for Encode's template.
void PutLibrary(std::string& out, const link_wire::Library& libnvvm);
void PutCall(std::string& out, const Call& call, bool with_modules);
void PutWithModules(std::string& out, bool with_modules);

template <typename Calls>
std::string Encode(const link_wire::Library& libnvvm, const Calls& calls,
                   bool with_modules) {
  std::string out;
  PutLibrary(out, libnvvm);
  for (const Call& call : calls) PutCall(out, call, with_modules);
  PutWithModules(out, with_modules);
  return out;
}

}  // namespace jitcache::nvvm_wire

#endif  // JITCACHE_CLIENT_WIRE_NVVM_WIRE_H_
