#ifndef JITCACHE_COMMON_PROTO_WIRE_H_
#define JITCACHE_COMMON_PROTO_WIRE_H_

// The protobuf wire format's primitives, for the few messages the small
// front ends (`jitcache`, `jitcache-ptxas`) write and read by hand so that
// they load neither protobuf nor gRPC. Plain C++ only.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitcache::proto_wire {

enum WireType { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

void PutVarint(std::string& out, uint64_t v);
// A field's tag and value; nothing for a value proto3 would leave out
// (zero, false), as protobuf writes it.
void PutVarintField(std::string& out, int field, uint64_t v);
void PutBytes(std::string& out, int field, std::string_view bytes);

// A bounds-checked reader of one message's fields.
class Reader {
 public:
  explicit Reader(std::string_view data)
      : p_(data.data()), end_(p_ + data.size()) {}
  bool done() const { return p_ == end_; }

  // The next field's number and wire type.
  bool Tag(int* field, int* type);
  bool Varint(uint64_t* v);
  bool Bytes(std::string* out);
  bool Skip(int wire_type);

 private:
  bool Advance(size_t n);
  const char* p_;
  const char* end_;
};

}  // namespace jitcache::proto_wire

#endif  // JITCACHE_COMMON_PROTO_WIRE_H_
