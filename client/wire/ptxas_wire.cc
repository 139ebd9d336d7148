#include "client/wire/ptxas_wire.h"

#include <sys/stat.h>

#include <cerrno>

#include "client/wire/proto_wire.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache::ptxas_wire {

using proto_wire::ForEachField;
using proto_wire::ForEachFieldOfAnswerWithRun;
using proto_wire::Int32Into;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarintField;
using proto_wire::Reader;
using proto_wire::VarintInto;

std::optional<std::vector<Source>> StatSources(
    const std::vector<std::string>& paths, std::string* why) {
  std::vector<Source> out;
  for (const std::string& path : paths) {
    struct stat st;
    Source source{path};
    if (stat(path.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode)) {
        *why = "a source is no regular file";
        return std::nullopt;
      }
      source.exists = true;
      source.size = static_cast<uint64_t>(st.st_size);
      source.mtime_ns = StampNs(st.st_mtim);
    } else if (errno != ENOENT && errno != ENOTDIR) {
      *why = "a source cannot be looked at here";
      return std::nullopt;
    }
    out.push_back(std::move(source));
  }
  return out;
}

void PutSource(std::string& out, int field, const Source& s) {
  using S = wire::PtxasSource;
  std::string source;
  PutBytes(source, S::kPath, s.path);
  PutVarintField(source, S::kExists, s.exists ? 1 : 0);
  PutVarintField(source, S::kSize, s.size);
  PutVarintField(source, S::kMtimeNs, static_cast<uint64_t>(s.mtime_ns));
  PutBytes(out, field, source);
}

std::string Encode(const Request& r) {
  using L = wire::ToolkitLibrary;
  using F = wire::PtxasRequest;
  std::string ptxas;
  PutBytes(ptxas, L::kName, "ptxas");
  PutBytes(ptxas, L::kPath, r.ptxas_path);
  PutVarintField(ptxas, L::kDevice, r.ptxas_stamp.dev);
  PutVarintField(ptxas, L::kInode, r.ptxas_stamp.ino);
  PutVarintField(ptxas, L::kSize, r.ptxas_stamp.size);
  PutVarintField(ptxas, L::kMtimeNs,
                 static_cast<uint64_t>(r.ptxas_stamp.mtime_ns));
  PutVarintField(ptxas, L::kCtimeNs,
                 static_cast<uint64_t>(r.ptxas_stamp.ctime_ns));

  std::string out;
  PutBytes(out, F::kPtxas, ptxas);
  PutBytes(out, F::kProgram, r.program);
  for (const std::string& a : r.arguments) PutBytes(out, F::kArguments, a);
  PutBytes(out, F::kPtx, r.ptx);
  PutBytes(out, F::kWorkingDirectory, r.working_directory);
  PutVarintField(out, F::kWithNames, r.with_names ? 1 : 0);
  for (const Source& s : r.sources) PutSource(out, F::kSources, s);
  return out;
}

namespace {

bool DecodeRun(std::string_view bytes, Answer* a) {
  using F = wire::PtxasRun;
  const auto flag = [](uint64_t v) { return v != 0; };
  return ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kStdout) {
          return in.Bytes(&a->stdout_bytes);
        }
        if (type != kVarint) return std::nullopt;
        switch (field) {
          case F::kExitStatus:
            return Int32Into(in, &a->exit_status);
          case F::kOutputWritten:
            return VarintInto(in, &a->output_written, flag);
          case F::kNamesMatter:
            return VarintInto(in, &a->names_matter, flag);
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
      bytes, F::kPtxasRun,
      [&](const std::string& run) { return DecodeRun(run, &a); },
      [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && field == F::kServed) {
          return Int32Into(in, &a.served);
        }
        if (type == kBytes && field == F::kObject) return in.Bytes(&a.output);
        if (type == kBytes && field == F::kLog) {
          return in.Bytes(&a.stderr_bytes);
        }
        return std::nullopt;
      });
  if (!ok) return std::nullopt;
  return a;
}

}  // namespace jitcache::ptxas_wire
