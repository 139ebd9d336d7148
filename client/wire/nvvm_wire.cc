#include "client/wire/nvvm_wire.h"

#include "client/wire/proto_wire.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache::nvvm_wire {

using proto_wire::ForEachField;
using proto_wire::ForEachFieldOfAnswerWithRun;
using proto_wire::Int32Into;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarintField;
using proto_wire::Reader;

void PutLibrary(std::string& out, const link_wire::Library& libnvvm) {
  using L = wire::ToolkitLibrary;
  std::string lib;
  PutBytes(lib, L::kName, libnvvm.name);
  PutBytes(lib, L::kPath, libnvvm.path);
  PutVarintField(lib, L::kDevice, libnvvm.stamp.dev);
  PutVarintField(lib, L::kInode, libnvvm.stamp.ino);
  PutVarintField(lib, L::kSize, libnvvm.stamp.size);
  PutVarintField(lib, L::kMtimeNs,
                 static_cast<uint64_t>(libnvvm.stamp.mtime_ns));
  PutVarintField(lib, L::kCtimeNs,
                 static_cast<uint64_t>(libnvvm.stamp.ctime_ns));
  PutBytes(out, wire::NvvmRequest::kLibnvvm, lib);
}

void PutCall(std::string& out, const Call& call, bool with_modules) {
  using C = wire::NvvmCall;
  std::string c;
  PutVarintField(c, C::kKind, static_cast<uint64_t>(call.kind));
  if (!call.name.empty()) PutBytes(c, C::kName, call.name);
  PutVarintField(c, C::kUnnamed, call.unnamed ? 1 : 0);
  if (!call.digest.empty()) PutBytes(c, C::kDigest, call.digest);
  if (with_modules && !call.module.empty()) {
    PutBytes(c, C::kModule, call.module);
  }
  for (const std::string& option : call.options) {
    PutBytes(c, C::kOptions, option);
  }
  PutBytes(out, wire::NvvmRequest::kCalls, c);
}

void PutWithModules(std::string& out, bool with_modules) {
  PutVarintField(out, wire::NvvmRequest::kWithModules, with_modules ? 1 : 0);
}

namespace {

bool DecodeRun(std::string_view bytes, Answer* a) {
  using F = wire::NvvmRun;
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kLog) return in.Bytes(&a->log);
        if (type == kBytes && field == F::kFailedOutput) {
          return in.Bytes(&a->output);
        }
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case F::kResult:
            return Int32Into(in, &a->result);
          case F::kLogSizeResult:
            return Int32Into(in, &a->log_size_result);
          case F::kLogResult:
            return Int32Into(in, &a->log_result);
          case F::kOutputSizeResult:
            return Int32Into(in, &a->output_size_result);
          case F::kOutputResult:
            return Int32Into(in, &a->output_result);
          default:
            return std::nullopt;
        }
      });
}

}  // namespace

std::optional<Answer> Decode(std::string_view bytes) {
  using F = wire::CompileResponse;
  Answer a;
  const bool ok = ForEachFieldOfAnswerWithRun(
      bytes, F::kNvvmRun,
      [&](const std::string& run) { return DecodeRun(run, &a); },
      [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kObject) return in.Bytes(&a.output);
        return std::nullopt;
      });
  if (!ok) return std::nullopt;
  return a;
}

}  // namespace jitcache::nvvm_wire
