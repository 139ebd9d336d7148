#ifndef JITCACHE_CLIENT_WIRE_PROTO_WIRE_H_
#define JITCACHE_CLIENT_WIRE_PROTO_WIRE_H_

// The protobuf wire format's primitives, for the few messages the small
// front ends (`jitcache`, `jitcache-ptxas`) write and read by hand so that
// they load neither protobuf nor gRPC. Plain C++ only.
#include <cstddef>
#include <cstdint>
#include <optional>
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
  // The field's bytes where they lie in the message (no copy).
  bool BytesView(std::string_view* out);
  bool Skip(int wire_type);

 private:
  bool Advance(size_t n);
  const char* p_;
  const char* end_;
};

// Reads one message: `on(field, wire_type, reader)` reads a field it knows
// and returns whether that went well, or nullopt for one it leaves (then
// skipped). False for bytes that are not a well-formed message.
template <typename OnField>
bool ForEachField(std::string_view message, OnField on) {
  Reader in(message);
  while (!in.done()) {
    int field = 0, type = 0;
    if (!in.Tag(&field, &type)) return false;
    const std::optional<bool> read = on(field, type, in);
    if (read.has_value() ? !*read : !in.Skip(type)) return false;
  }
  return true;
}

// A CompileResponse that answers with a run (a ptxas run, a libNVVM call
// sequence, an as-called link's trace): the sub-message in field
// `run_field` must be there, and each time it is seen (a message field seen
// twice is merged, as protobuf does) `on_run(bytes)` reads it; `on_other`
// reads the response's other fields as ForEachField's `on` does. False for
// bytes that are not such a response.
template <typename OnRun, typename OnOther>
bool ForEachFieldOfAnswerWithRun(std::string_view message, int run_field,
                                 OnRun on_run, OnOther on_other) {
  bool has_run = false;
  const bool ok = ForEachField(
      message, [&](int field, int type, Reader& in) -> std::optional<bool> {
        if (type == kBytes && field == run_field) {
          std::string run;
          has_run = true;
          return in.Bytes(&run) && on_run(run);
        }
        return on_other(field, type, in);
      });
  return ok && has_run;
}

// An int32 field's varint: a negative value is sign-extended to 64 bits.
inline int Int32Of(uint64_t v) {
  return static_cast<int>(static_cast<int64_t>(v));
}

// A varint field into `*out`, by `convert` (Int32Of, a cast).
template <typename T, typename Convert>
bool VarintInto(Reader& in, T* out, Convert convert) {
  uint64_t v = 0;
  if (!in.Varint(&v)) return false;
  *out = convert(v);
  return true;
}

// An int32 field into `*out`.
inline bool Int32Into(Reader& in, int* out) {
  return VarintInto(in, out, Int32Of);
}

}  // namespace jitcache::proto_wire

#endif  // JITCACHE_CLIENT_WIRE_PROTO_WIRE_H_
