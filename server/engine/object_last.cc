#include "server/engine/object_last.h"

namespace jitcache {

std::string SerializeObjectLast(v1::CompileResponse response) {
  // Protobuf merges concatenated encodings of a message, so the response
  // without its object, followed by a response holding only the object, is
  // the same response with the object's field last (and nothing of it when
  // the object is empty).
  v1::CompileResponse object_only;
  object_only.mutable_object()->swap(*response.mutable_object());
  std::string out = response.SerializeAsString();
  object_only.AppendToString(&out);
  return out;
}

}  // namespace jitcache
