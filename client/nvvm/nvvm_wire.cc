#include "client/nvvm/nvvm_wire.h"

#include "common/proto_wire.h"

namespace jitcache::nvvm_wire {

using proto_wire::ForEachField;
using proto_wire::Int32Into;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarintField;
using proto_wire::Reader;

void PutLibrary(std::string& out, const link_wire::Library& libnvvm) {
  std::string lib;
  PutBytes(lib, 1, libnvvm.name);
  PutBytes(lib, 2, libnvvm.path);
  PutVarintField(lib, 3, libnvvm.stamp.dev);
  PutVarintField(lib, 4, libnvvm.stamp.ino);
  PutVarintField(lib, 5, libnvvm.stamp.size);
  PutVarintField(lib, 6, static_cast<uint64_t>(libnvvm.stamp.mtime_ns));
  PutVarintField(lib, 9, static_cast<uint64_t>(libnvvm.stamp.ctime_ns));
  PutBytes(out, 1, lib);
}

void PutCall(std::string& out, const Call& call, bool with_modules) {
  std::string c;
  PutVarintField(c, 1, static_cast<uint64_t>(call.kind));
  if (!call.name.empty()) PutBytes(c, 2, call.name);
  PutVarintField(c, 3, call.unnamed ? 1 : 0);
  if (!call.digest.empty()) PutBytes(c, 4, call.digest);
  if (with_modules && !call.module.empty()) PutBytes(c, 5, call.module);
  for (const std::string& option : call.options) PutBytes(c, 6, option);
  PutBytes(out, 2, c);
}

void PutWithModules(std::string& out, bool with_modules) {
  PutVarintField(out, 3, with_modules ? 1 : 0);
}

namespace {

bool DecodeRun(std::string_view bytes, Answer* a) {
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == 3) return in.Bytes(&a->log);
        if (type == kBytes && field == 7) return in.Bytes(&a->output);
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case 1:
            return Int32Into(in, &a->result);
          case 2:
            return Int32Into(in, &a->log_size_result);
          case 4:
            return Int32Into(in, &a->log_result);
          case 5:
            return Int32Into(in, &a->output_size_result);
          case 6:
            return Int32Into(in, &a->output_result);
          default:
            return std::nullopt;
        }
      });
}

}  // namespace

std::optional<Answer> Decode(std::string_view bytes) {
  Answer a;
  bool has_run = false;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == 2) return in.Bytes(&a.output);
        if (type == kBytes && field == 16) {
          std::string run;
          has_run = true;
          return in.Bytes(&run) && DecodeRun(run, &a);
        }
        return std::nullopt;
      });
  if (!ok || !has_run) return std::nullopt;
  return a;
}

}  // namespace jitcache::nvvm_wire
