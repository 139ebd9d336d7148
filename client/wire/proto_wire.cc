#include "client/wire/proto_wire.h"

namespace jitcache::proto_wire {

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutVarintField(std::string& out, int field, uint64_t v) {
  if (v == 0) return;
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | kVarint);
  PutVarint(out, v);
}

void PutBytes(std::string& out, int field, std::string_view bytes) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | kBytes);
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

bool Reader::Tag(int* field, int* type) {
  uint64_t tag = 0;
  if (!Varint(&tag) || (tag >> 3) > 0x1fffffff) return false;
  *field = static_cast<int>(tag >> 3);
  *type = static_cast<int>(tag & 7);
  return true;
}

bool Reader::Varint(uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ == end_) return false;
    const uint8_t b = static_cast<uint8_t>(*p_++);
    *v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool Reader::Bytes(std::string* out) {
  std::string_view view;
  if (!BytesView(&view)) return false;
  out->assign(view.data(), view.size());
  return true;
}

bool Reader::BytesView(std::string_view* out) {
  uint64_t n = 0;
  if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
  *out = std::string_view(p_, static_cast<size_t>(n));
  p_ += n;
  return true;
}

bool Reader::Skip(int wire_type) {
  uint64_t v = 0;
  switch (wire_type) {
    case kVarint:
      return Varint(&v);
    case kBytes:
      return Varint(&v) && v <= static_cast<uint64_t>(end_ - p_) &&
             Advance(static_cast<size_t>(v));
    case kFixed64:
      return Advance(8);
    case kFixed32:
      return Advance(4);
    default:
      return false;
  }
}

bool Reader::Advance(size_t n) {
  if (n > static_cast<size_t>(end_ - p_)) return false;
  p_ += n;
  return true;
}

}  // namespace jitcache::proto_wire
