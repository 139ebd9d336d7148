#include "client/nvjitlink/link_wire.h"

#include "common/proto_wire.h"

namespace jitcache::link_wire {

using proto_wire::ForEachField;
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
  std::string out;
  for (const Input& input : inputs) {
    std::string in;
    if (send_bytes && !steps_only) {
      PutBytes(in, 2, input.bytes);
    } else {
      PutBytes(in, 1, input.digest);
    }
    PutVarintField(in, 3, static_cast<uint64_t>(input.kind));
    if (!input.name.empty()) PutBytes(in, 4, input.name);
    PutVarintField(in, 5, input.typed_by_content ? 1 : 0);
    PutBytes(out, 1, in);
  }
  for (const std::string& o : options) PutBytes(out, 2, o);
  PutVarintField(out, 4, 1);  // as_called
  PutVarintField(out, 5, steps_only ? 1 : 0);
  PutVarintField(out, 6, disproves ? 1 : 0);
  return out;
}

namespace {

bool DecodeLogs(std::string_view bytes, Step* step) {
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && field == 1) {
          return VarintInto(in, &step->error_size_result, Int32Of);
        }
        if (type == kVarint && field == 3) {
          return VarintInto(in, &step->info_size_result, Int32Of);
        }
        if (type == kBytes && field == 2) return in.Bytes(&step->error_log);
        if (type == kBytes && field == 4) return in.Bytes(&step->info_log);
        return std::nullopt;
      });
}

bool DecodeStep(std::string_view bytes, Step* step) {
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && field == 1) {
          return VarintInto(in, &step->result, Int32Of);
        }
        if (type == kBytes && field == 2) {
          std::string logs;
          // A message field seen twice is merged, as protobuf does.
          return in.Bytes(&logs) && DecodeLogs(logs, step);
        }
        if (type == kBytes && field == 3) return in.Bytes(&step->stderr_text);
        return std::nullopt;
      });
}

bool DecodeTrace(std::string_view bytes, Trace* t) {
  const auto flag = [](uint64_t v) { return v != 0; };
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == 2) {
          std::string step;
          t->steps.emplace_back();
          return in.Bytes(&step) && DecodeStep(step, &t->steps.back());
        }
        if (type == kBytes && field == 8) return in.Bytes(&t->ptx);
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case 1:
            return VarintInto(in, &t->handle_created, flag);
          case 3:
            return VarintInto(in, &t->complete, flag);
          case 4:
            return VarintInto(in, &t->cubin_size_result, Int32Of);
          case 5:
            return VarintInto(in, &t->cubin_result, Int32Of);
          case 6:
            return VarintInto(in, &t->ptx_size_result, Int32Of);
          case 7:
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
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == 1) return in.Bytes(&lib->name);
        if (type == kBytes && field == 2) return in.Bytes(&lib->path);
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case 3:
            return VarintInto(in, &lib->stamp.dev, u64);
          case 4:
            return VarintInto(in, &lib->stamp.ino, u64);
          case 5:
            return VarintInto(in, &lib->stamp.size, u64);
          case 6:
            return VarintInto(in, &lib->stamp.mtime_ns, i64);
          case 7:
            return VarintInto(in, &lib->major, u32);
          case 8:
            return VarintInto(in, &lib->minor, u32);
          case 9:
            return VarintInto(in, &lib->stamp.ctime_ns, i64);
          case 11:
            return VarintInto(in, &lib->ir_major, u32);
          case 12:
            return VarintInto(in, &lib->ir_minor, u32);
          case 13:
            return VarintInto(in, &lib->debug_major, u32);
          case 14:
            return VarintInto(in, &lib->debug_minor, u32);
          default:
            return std::nullopt;
        }
      });
}

}  // namespace

std::optional<Trace> Decode(std::string_view bytes) {
  Trace t;
  bool has_trace = false;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == 2) return in.Bytes(&t.cubin);
        if (type == kBytes && field == 11) {
          std::string trace;
          has_trace = true;
          return in.Bytes(&trace) && DecodeTrace(trace, &t);
        }
        return std::nullopt;
      });
  if (!ok || !has_trace) return std::nullopt;
  return t;
}

std::optional<std::vector<Library>> DecodeLibraries(std::string_view bytes) {
  std::vector<Library> libraries;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type != kBytes || field != 8) return std::nullopt;
        std::string lib;
        libraries.emplace_back();
        return in.Bytes(&lib) && DecodeLibrary(lib, &libraries.back());
      });
  if (!ok) return std::nullopt;
  return libraries;
}

}  // namespace jitcache::link_wire
