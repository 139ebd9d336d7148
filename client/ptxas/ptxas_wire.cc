#include "client/ptxas/ptxas_wire.h"

#include "common/proto_wire.h"

namespace jitcache::ptxas_wire {

using proto_wire::ForEachField;
using proto_wire::Int32Of;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarintField;
using proto_wire::Reader;

std::string Encode(const Request& r) {
  std::string ptxas;
  PutBytes(ptxas, 1, "ptxas");
  PutBytes(ptxas, 2, r.ptxas_path);
  PutVarintField(ptxas, 3, r.ptxas_stamp.dev);
  PutVarintField(ptxas, 4, r.ptxas_stamp.ino);
  PutVarintField(ptxas, 5, r.ptxas_stamp.size);
  PutVarintField(ptxas, 6, static_cast<uint64_t>(r.ptxas_stamp.mtime_ns));
  PutVarintField(ptxas, 9, static_cast<uint64_t>(r.ptxas_stamp.ctime_ns));

  std::string out;
  PutBytes(out, 1, ptxas);
  PutBytes(out, 2, r.program);
  for (const std::string& a : r.arguments) PutBytes(out, 3, a);
  PutBytes(out, 4, r.ptx);
  PutBytes(out, 5, r.working_directory);
  PutVarintField(out, 6, r.with_names ? 1 : 0);
  for (const Source& s : r.sources) {
    std::string source;
    PutBytes(source, 1, s.path);
    PutVarintField(source, 2, s.exists ? 1 : 0);
    PutVarintField(source, 3, s.size);
    PutVarintField(source, 4, static_cast<uint64_t>(s.mtime_ns));
    PutBytes(out, 7, source);
  }
  return out;
}

namespace {

bool DecodeRun(std::string_view bytes, Answer* a) {
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == 2) return in.Bytes(&a->stdout_bytes);
        if (type != kVarint || field < 1 || field > 4 || field == 2) {
          return std::nullopt;
        }
        uint64_t v = 0;
        if (!in.Varint(&v)) return false;
        if (field == 1) a->exit_status = Int32Of(v);
        if (field == 3) a->output_written = v != 0;
        if (field == 4) a->names_matter = v != 0;
        return true;
      });
}

}  // namespace

std::optional<Answer> Decode(std::string_view bytes) {
  Answer a;
  bool has_run = false;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && field == 6) {
          uint64_t v = 0;
          if (!in.Varint(&v)) return false;
          a.served = static_cast<int>(v);
          return true;
        }
        if (type == kBytes && field == 2) return in.Bytes(&a.output);
        if (type == kBytes && field == 3) return in.Bytes(&a.stderr_bytes);
        if (type == kBytes && field == 12) {
          std::string run;
          has_run = true;
          // A message field seen twice is merged, as protobuf does.
          return in.Bytes(&run) && DecodeRun(run, &a);
        }
        return std::nullopt;
      });
  if (!ok || !has_run) return std::nullopt;
  return a;
}

}  // namespace jitcache::ptxas_wire
