#include "client/wire/link_wire.h"

#include "client/wire/proto_wire.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache::link_wire {

using proto_wire::ForEachField;
using proto_wire::ForEachFieldOfAnswerWithRun;
using proto_wire::Int32Of;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarintField;
using proto_wire::Reader;
using proto_wire::VarintInto;

std::string Encode(const std::vector<std::string>& options,
                   const std::vector<Input>& inputs, bool steps_only,
                   bool send_bytes, bool disproves) {
  using F = wire::LinkRequest;
  using I = wire::LinkInput;
  std::string out;
  for (const Input& input : inputs) {
    std::string in;
    if (send_bytes && !steps_only) {
      PutBytes(in, I::kData, input.bytes);
    } else {
      PutBytes(in, I::kDigest, input.digest);
    }
    PutVarintField(in, I::kKind, static_cast<uint64_t>(input.kind));
    if (!input.name.empty()) PutBytes(in, I::kName, input.name);
    PutVarintField(in, I::kTypedByContent, input.typed_by_content ? 1 : 0);
    for (const ptxas_wire::Source& s : input.sources) {
      ptxas_wire::PutSource(in, I::kSources, s);
    }
    PutBytes(out, F::kInputs, in);
  }
  for (const std::string& o : options) PutBytes(out, F::kOptions, o);
  PutVarintField(out, F::kAsCalled, 1);
  PutVarintField(out, F::kStepsOnly, steps_only ? 1 : 0);
  PutVarintField(out, F::kDisproves, disproves ? 1 : 0);
  return out;
}

namespace {

bool DecodeLogs(std::string_view bytes, Step* step) {
  using F = wire::NvJitLinkLogs;
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && field == F::kErrorSizeResult) {
          return VarintInto(in, &step->error_size_result, Int32Of);
        }
        if (type == kVarint && field == F::kInfoSizeResult) {
          return VarintInto(in, &step->info_size_result, Int32Of);
        }
        if (type == kBytes && field == F::kErrorLog) {
          return in.Bytes(&step->error_log);
        }
        if (type == kBytes && field == F::kInfoLog) {
          return in.Bytes(&step->info_log);
        }
        return std::nullopt;
      });
}

bool DecodeStep(std::string_view bytes, Step* step) {
  using F = wire::NvJitLinkStep;
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && field == F::kResult) {
          return VarintInto(in, &step->result, Int32Of);
        }
        if (type == kBytes && field == F::kLogs) {
          std::string logs;
          // A message field seen twice is merged, as protobuf does.
          return in.Bytes(&logs) && DecodeLogs(logs, step);
        }
        if (type == kBytes && field == F::kStderrText) {
          return in.Bytes(&step->stderr_text);
        }
        return std::nullopt;
      });
}

bool DecodeTrace(std::string_view bytes, Trace* t) {
  using F = wire::NvJitLinkTrace;
  const auto flag = [](uint64_t v) { return v != 0; };
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kSteps) {
          std::string step;
          t->steps.emplace_back();
          return in.Bytes(&step) && DecodeStep(step, &t->steps.back());
        }
        if (type == kBytes && field == F::kPtx) return in.Bytes(&t->ptx);
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case F::kHandleCreated:
            return VarintInto(in, &t->handle_created, flag);
          case F::kComplete:
            return VarintInto(in, &t->complete, flag);
          case F::kCubinSizeResult:
            return VarintInto(in, &t->cubin_size_result, Int32Of);
          case F::kCubinResult:
            return VarintInto(in, &t->cubin_result, Int32Of);
          case F::kPtxSizeResult:
            return VarintInto(in, &t->ptx_size_result, Int32Of);
          case F::kPtxResult:
            return VarintInto(in, &t->ptx_result, Int32Of);
          default:
            return std::nullopt;
        }
      });
}

bool DecodeLibrary(std::string_view bytes, Library* lib) {
  const auto u64 = [](uint64_t v) { return v; };
  const auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  const auto u32 = [](uint64_t v) { return static_cast<uint32_t>(v); };
  using F = wire::ToolkitLibrary;
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kName) return in.Bytes(&lib->name);
        if (type == kBytes && field == F::kPath) return in.Bytes(&lib->path);
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case F::kDevice:
            return VarintInto(in, &lib->stamp.dev, u64);
          case F::kInode:
            return VarintInto(in, &lib->stamp.ino, u64);
          case F::kSize:
            return VarintInto(in, &lib->stamp.size, u64);
          case F::kMtimeNs:
            return VarintInto(in, &lib->stamp.mtime_ns, i64);
          case F::kMajor:
            return VarintInto(in, &lib->major, u32);
          case F::kMinor:
            return VarintInto(in, &lib->minor, u32);
          case F::kCtimeNs:
            return VarintInto(in, &lib->stamp.ctime_ns, i64);
          case F::kIrMajor:
            return VarintInto(in, &lib->ir_major, u32);
          case F::kIrMinor:
            return VarintInto(in, &lib->ir_minor, u32);
          case F::kDebugMajor:
            return VarintInto(in, &lib->debug_major, u32);
          case F::kDebugMinor:
            return VarintInto(in, &lib->debug_minor, u32);
          default:
            return std::nullopt;
        }
      });
}

}  // namespace

std::optional<Trace> Decode(std::string_view bytes) {
  using F = wire::CompileResponse;
  Trace t;
  const bool ok = ForEachFieldOfAnswerWithRun(
      bytes, F::kLinkTrace,
      [&](const std::string& trace) { return DecodeTrace(trace, &t); },
      [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kObject) return in.Bytes(&t.cubin);
        return std::nullopt;
      });
  if (!ok) return std::nullopt;
  return t;
}

std::optional<std::vector<Library>> DecodeLibraries(std::string_view bytes) {
  std::vector<Library> libraries;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type != kBytes || field != wire::PingResponse::kLibraries) {
          return std::nullopt;
        }
        std::string lib;
        libraries.emplace_back();
        return in.Bytes(&lib) && DecodeLibrary(lib, &libraries.back());
      });
  if (!ok) return std::nullopt;
  return libraries;
}

std::vector<DaemonLibrary> Identities(const std::vector<Library>& libraries) {
  std::vector<DaemonLibrary> out;
  out.reserve(libraries.size());
  for (const Library& lib : libraries) {
    out.push_back({lib.name, lib.path, lib.stamp});
  }
  return out;
}

}  // namespace jitcache::link_wire
