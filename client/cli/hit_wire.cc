#include "client/cli/hit_wire.h"

#include "common/proto_wire.h"

namespace jitcache::hit_wire {
using proto_wire::ForEachField;
using proto_wire::kBytes;
using proto_wire::kVarint;
using proto_wire::PutBytes;
using proto_wire::PutVarint;
using proto_wire::Reader;

std::string Encode(const Request& r) {
  std::string out;
  PutBytes(out, 1, r.source);
  if (!r.program_name.empty()) PutBytes(out, 2, r.program_name);
  for (const auto& [name, contents] : r.headers) {
    std::string header;
    PutBytes(header, 1, name);
    PutBytes(header, 2, contents);
    PutBytes(out, 3, header);
  }
  for (const std::string& o : r.options) PutBytes(out, 4, o);
  for (const std::string& n : r.name_expressions) PutBytes(out, 5, n);
  if (r.target != 0) {
    PutVarint(out, (6 << 3) | kVarint);
    PutVarint(out, static_cast<uint64_t>(r.target));
  }
  return out;
}

std::optional<Response> Decode(std::string_view bytes) {
  Response r;
  const bool ok = ForEachField(
      bytes, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kVarint && (field == 1 || field == 6 || field == 7)) {
          uint64_t v = 0;
          if (!in.Varint(&v)) return false;
          if (field == 1) r.outcome = static_cast<int>(v);
          if (field == 6) r.served = static_cast<int>(v);
          if (field == 7) r.compile_time_us = static_cast<int64_t>(v);
          return true;
        }
        if (type == kBytes && field == 2) return in.Bytes(&r.object);
        if (type == kBytes && field == 3) return in.Bytes(&r.log);
        if (type == kBytes && field == 5) return in.Bytes(&r.cache_key);
        if (type != kBytes || field != 4) return std::nullopt;
        std::string lowered, expr, name;
        if (!in.Bytes(&lowered)) return false;
        const bool pair_ok = ForEachField(
            lowered, [&](int f, int t, Reader& pair) -> std::optional<bool> {
              if (t == kBytes && f == 1) return pair.Bytes(&expr);
              if (t == kBytes && f == 2) return pair.Bytes(&name);
              return std::nullopt;
            });
        r.lowered_names.emplace_back(std::move(expr), std::move(name));
        return pair_ok;
      });
  if (!ok) return std::nullopt;
  return r;
}

std::optional<std::string> DecodeToolkitFingerprint(std::string_view bytes) {
  std::string fingerprint;
  Reader in(bytes);
  while (!in.done()) {
    uint64_t tag = 0;
    if (!in.Varint(&tag)) return std::nullopt;
    const int type = static_cast<int>(tag & 7);
    const bool ok = type == kBytes && (tag >> 3) == 3 ? in.Bytes(&fingerprint)
                                                      : in.Skip(type);
    if (!ok) return std::nullopt;
  }
  return fingerprint;
}

}  // namespace jitcache::hit_wire
