#ifndef JITCACHE_OBJECT_BYTES_H_
#define JITCACHE_OBJECT_BYTES_H_

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace jitcache {

// An object's bytes, read like a string. They are the value's own, or, for
// a large binary hit (cubin, LTO-IR, OptiX IR), the daemon's answer file
// mapped read-only into this process (sealed by the daemon against any
// change, so no process can alter them): then a hit costs no copy whatever
// the object's size, and a copy of this value shares the mapping, which
// lives as long as any copy does. Library::Load hands the driver the mapped
// bytes. A process keeps at most 256 MiB of hits mapped; past that they are
// copied. PTX, which callers hand on as a C string, is always the value's
// own.
// Unlike std::string's, data() is not followed by a NUL when shared().
// The conversion to std::string copies (as binding to a const
// std::string& does): read through view() to avoid it.
// Thread-safety: like std::string; reading from many threads is safe.
class ObjectBytes {
 public:
  ObjectBytes() = default;
  explicit ObjectBytes(std::string bytes) : owned_(std::move(bytes)) {}
  // `view` lies in memory that `owner` keeps alive and unchanged (no
  // owner: the bytes are copied).
  ObjectBytes(std::shared_ptr<const void> owner, std::string_view view)
      : owned_(owner == nullptr ? std::string(view) : std::string()),
        owner_(std::move(owner)),
        view_(view) {}

  ObjectBytes& operator=(std::string bytes) {
    owned_ = std::move(bytes);
    owner_.reset();
    view_ = {};
    return *this;
  }

  std::string_view view() const {
    return owner_ != nullptr ? view_ : std::string_view(owned_);
  }
  // Read as a string, as ObjectCode::bytes was one: a view, or a copy.
  operator std::string_view() const { return view(); }  // NOLINT
  operator std::string() const { return str(); }        // NOLINT
  const char* data() const { return view().data(); }
  size_t size() const { return view().size(); }
  bool empty() const { return view().empty(); }
  std::string_view::const_iterator begin() const { return view().begin(); }
  std::string_view::const_iterator end() const { return view().end(); }
  // A copy of the bytes, the value's own.
  std::string str() const { return std::string(view()); }
  // Whether they are a mapping shared with the daemon's answer file.
  bool shared() const { return owner_ != nullptr; }

  friend bool operator==(const ObjectBytes& a, const ObjectBytes& b) {
    return a.view() == b.view();
  }
  friend bool operator==(const ObjectBytes& a, std::string_view b) {
    return a.view() == b;
  }
  friend bool operator==(const ObjectBytes& a, const std::string& b) {
    return a.view() == b;
  }
  friend bool operator==(const ObjectBytes& a, const char* b) {
    return a.view() == b;
  }
  friend std::ostream& operator<<(std::ostream& out, const ObjectBytes& b) {
    return out << b.view();
  }

 private:
  std::string owned_;
  std::shared_ptr<const void> owner_;  // null: the bytes are owned_
  std::string_view view_;              // with owner_: the bytes
};

}  // namespace jitcache

#endif  // JITCACHE_OBJECT_BYTES_H_
