#include "client/wire/compile_wire.h"

#include "client/wire/proto_wire.h"
#include "jitcache/v1/wire_fields.h"

namespace jitcache::compile_wire {

using proto_wire::ForEachField;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarintField;
using proto_wire::Reader;

std::string Encode(const Request& r) {
  std::string out;
  EncodeTo(r, out);
  return out;
}

void EncodeTo(const Request& r, std::string& out) {
  using F = wire::CompileRequest;
  PutBytes(out, F::kSource, r.source);
  if (!r.program_name.empty()) PutBytes(out, F::kProgramName, r.program_name);
  for (const auto& [name, contents] : r.headers) {
    std::string header;
    PutBytes(header, wire::Header::kName, name);
    PutBytes(header, wire::Header::kContents, contents);
    PutBytes(out, F::kHeaders, header);
  }
  for (const std::string& o : r.options) PutBytes(out, F::kOptions, o);
  for (const std::string& n : r.name_expressions) {
    PutBytes(out, F::kNameExpressions, n);
  }
  PutVarintField(out, F::kTarget, static_cast<uint64_t>(r.target));
  PutVarintField(out, F::kIncludesResolved, r.includes_resolved);
  for (const Request::IncludedFile& f : r.included_files) {
    using G = wire::IncludedFile;
    std::string file;
    PutBytes(file, G::kPath, f.path);
    PutBytes(file, G::kContents, f.contents);
    PutVarintField(file, G::kMtimeNs, static_cast<uint64_t>(f.mtime_ns));
    PutBytes(out, F::kIncludedFiles, file);
  }
  if (!r.included_set_sha256.empty()) {
    PutBytes(out, F::kIncludedSetSha256, r.included_set_sha256);
  }
  PutVarintField(out, F::kExactIncludePath, r.exact_include_path);
  if (!r.working_directory.empty()) {
    PutBytes(out, F::kWorkingDirectory, r.working_directory);
  }
  if (!r.included_mtimes_ns.empty()) {
    // Packed, as protobuf writes a repeated int64.
    std::string packed;
    for (int64_t t : r.included_mtimes_ns) {
      proto_wire::PutVarint(packed, static_cast<uint64_t>(t));
    }
    PutBytes(out, F::kIncludedMtimesNs, packed);
  }
}

namespace {

// One LoweredName: its expression and name.
bool DecodeLoweredName(std::string_view bytes, ResponseView& r) {
  using F = wire::LoweredName;
  std::string_view expr, name;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kNameExpression) {
          return in.BytesView(&expr);
        }
        if (type == kBytes && field == F::kLoweredName) {
          return in.BytesView(&name);
        }
        return std::nullopt;
      });
  r.lowered_names.emplace_back(expr, name);
  return ok;
}

}  // namespace

std::optional<ResponseView> DecodeView(std::string_view bytes) {
  using F = wire::CompileResponse;
  const auto as_int64 = [](uint64_t v) { return static_cast<int64_t>(v); };
  const auto as_bool = [](uint64_t v) { return v != 0; };
  ResponseView r;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint) {
          switch (field) {
            case F::kOutcome:
              return proto_wire::Int32Into(in, &r.outcome);
            case F::kServed:
              return proto_wire::Int32Into(in, &r.served);
            case F::kCompileTimeUs:
              return proto_wire::VarintInto(in, &r.compile_time_us, as_int64);
            case F::kServedRemotely:
              return proto_wire::VarintInto(in, &r.served_remotely, as_bool);
            case F::kProofPending:
              return proto_wire::VarintInto(in, &r.proof_pending, as_bool);
            default:
              return std::nullopt;
          }
        }
        if (type != kBytes) return std::nullopt;
        switch (field) {
          case F::kObject:
            return in.BytesView(&r.object);
          case F::kLog:
            return in.BytesView(&r.log);
          case F::kCacheKey:
            return in.BytesView(&r.cache_key);
          case F::kObjectDigest:
            return in.BytesView(&r.object_digest);
          case F::kLoweredNames: {
            std::string_view lowered;
            return in.BytesView(&lowered) && DecodeLoweredName(lowered, r);
          }
          default:
            return std::nullopt;
        }
      });
  if (!ok) return std::nullopt;
  return r;
}

std::optional<Response> Decode(std::string_view bytes) {
  std::optional<ResponseView> view = DecodeView(bytes);
  if (!view.has_value()) return std::nullopt;
  Response r;
  r.outcome = view->outcome;
  r.object = view->object;
  r.log = view->log;
  for (const auto& [expr, name] : view->lowered_names) {
    r.lowered_names.emplace_back(expr, name);
  }
  r.cache_key = view->cache_key;
  r.served = view->served;
  r.compile_time_us = view->compile_time_us;
  return r;
}

std::optional<Toolkit> DecodeToolkit(std::string_view bytes) {
  using F = wire::PingResponse;
  Toolkit toolkit;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == F::kToolchainFingerprint) {
          return in.Bytes(&toolkit.fingerprint);
        }
        if (type == kBytes && field == F::kIncludeDirs) {
          return in.Bytes(&toolkit.include_dirs.emplace_back());
        }
        return std::nullopt;
      });
  if (!ok) return std::nullopt;
  return toolkit;
}

}  // namespace jitcache::compile_wire
