#ifndef JITCACHE_COMMON_SIZED_READ_H_
#define JITCACHE_COMMON_SIZED_READ_H_

#include <cstddef>
#include <string>

namespace jitcache {

// The toolkit's two-call reads (nvJitLink's logs and outputs): a size, then
// that many bytes into the caller's buffer. `out` receives exactly the bytes
// read (NUL terminators included), or nothing. Returns the size call's
// result; `read` (optional) receives the read's, or the size call's when
// that failed or the size was 0 (nothing is read then). Result is the
// library's result type, `ok` its success value.
template <typename Result, typename SizeOf, typename ReadInto>
Result ReadSized(SizeOf size_of, ReadInto read_into, Result ok,
                 std::string* out, Result* read = nullptr) {
  size_t size = 0;
  const Result sized = size_of(&size);
  Result got = sized;
  out->clear();
  if (sized == ok && size > 0) {
    out->assign(size, '\0');
    got = read_into(out->data());
    if (got != ok) out->clear();
  }
  if (read != nullptr) *read = got;
  return sized;
}

}  // namespace jitcache

#endif  // JITCACHE_COMMON_SIZED_READ_H_
